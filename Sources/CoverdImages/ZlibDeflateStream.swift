import CZlib

/// Owns one zlib deflate stream (at a stable address, as zlib keeps pointers
/// into it) and its output scratch, both freed in `deinit`. For image data too
/// large to deflate in one buffer: memory stays bounded whatever the image's size.
///
/// Not thread-safe: one stream per encode.
final class ZlibDeflateStream {
    private let stream: UnsafeMutablePointer<z_stream>
    private let scratch: UnsafeMutablePointer<UInt8>
    private static let scratchSize = 64 * 1024

    init(level: Int) throws(CoverImageError) {
        // Set up in locals: a class whose init throws after its properties are set still runs deinit.
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let code = deflateInit_(stream, Int32(level), zlibVersion(), Int32(MemoryLayout<z_stream>.size))
        guard code == Z_OK else {
            stream.deinitialize(count: 1)
            stream.deallocate()
            let reason = code == Z_MEM_ERROR ? "out of memory" : "zlib error \(code)"
            throw .encodeFailed("zlib cannot start deflating at level \(level) (\(reason))")
        }
        self.stream = stream
        scratch = .allocate(capacity: ZlibDeflateStream.scratchSize)
    }

    deinit {
        deflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
        scratch.deallocate()
    }

    /// Deflates `input`, ending the stream when `finish`; each piece of output goes to `emit` as it fills.
    func compress(
        _ input: UnsafeRawBufferPointer, finish: Bool, emit: (UnsafeRawBufferPointer) -> Void
    ) throws(CoverImageError) {
        let scratchSize = ZlibDeflateStream.scratchSize
        stream.pointee.next_in = input.baseAddress.map { UnsafeMutablePointer(mutating: $0.assumingMemoryBound(to: UInt8.self)) }
        stream.pointee.avail_in = UInt32(input.count)
        while true {
            stream.pointee.next_out = scratch
            stream.pointee.avail_out = UInt32(scratchSize)
            let code = deflate(stream, finish ? Z_FINISH : Z_NO_FLUSH)
            let produced = scratchSize - Int(stream.pointee.avail_out)
            if produced > 0 { emit(UnsafeRawBufferPointer(start: scratch, count: produced)) }
            switch code {
            case Z_STREAM_END: return
            case Z_OK, Z_BUF_ERROR:
                // More to do while the scratch came back full; otherwise all input is taken.
                if stream.pointee.avail_out == 0 { continue }
                guard finish else { return }
            default:
                throw .encodeFailed("zlib failed while deflating (error \(code))")
            }
        }
    }
}
