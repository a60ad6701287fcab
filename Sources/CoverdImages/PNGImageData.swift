import CDeflate
import CZlib

/// Checks a PNG's compressed image data (the IDAT chunks' zlib stream) in
/// full: it must inflate, end where it says, with exactly the bytes of rows
/// the header implies, each row led by a filter type decoders know, and the
/// Adler-32 of them, so a file with valid chunk CRCs but garbage, cut or
/// missing pixels is refused, as a decoder would refuse it. Every download
/// and `coverd verify` go through the same check.
///
/// An image of up to `inMemoryLimit` bytes of rows, whose compressed stream
/// is no larger, is inflated by libdeflate into one buffer (about twice
/// zlib's speed on photo-like covers) when `InflateMemory` has room for its
/// rows (and for the copy of a stream split over several chunks); any other is
/// inflated by zlib through a small scratch buffer, so memory stays bounded
/// whatever the images' sizes and however many are checked at once.
struct PNGImageData {
    /// How an image's data was inflated.
    enum Path: Equatable {
        case inMemory
        case streamed
    }

    /// Rows (and a compressed stream) up to this size are inflated whole in memory; 8 MiB is a 1,600×1,300 RGBA cover.
    static let inMemoryLimit = 8 << 20

    /// CMF and FLG of RFC 1950: deflate with a window of at most 32 KiB, a valid check, no preset dictionary.
    private static func checkZlibHeader(_ cmf: UInt8, _ flg: UInt8) throws(PNGValidationError) {
        guard cmf & 0x0F == 8, cmf >> 4 <= 7, (UInt16(cmf) << 8 | UInt16(flg)) % 31 == 0, flg & 0x20 == 0 else {
            throw .structure("image data is not a zlib stream")
        }
    }

    /// Inflates `chunks` (the IDAT payloads, in order) and checks the rows' size, filter types and checksum.
    @discardableResult
    static func check(
        _ chunks: [UnsafeRawBufferPointer], info: PNGInfo, memory: InflateMemory
    ) throws(PNGValidationError) -> Path {
        let chunks = chunks.filter { $0.count > 0 }
        let total = chunks.reduce(0) { $0 + $1.count }
        guard total >= 2 else { throw .structure("image data ends early (no zlib header)") }
        let first = chunks[0].count >= 2 ? (chunks[0][0], chunks[0][1]) : (chunks[0][0], chunks[1][0])
        try checkZlibHeader(first.0, first.1)
        let scanlines = PNGScanlines(info)
        let expected = scanlines.byteCount
        // Both bounded: the rows, and the copy of a stream split over several IDAT chunks.
        let needed = expected + (chunks.count > 1 ? total : 0)
        if expected <= inMemoryLimit && total <= inMemoryLimit && memory.take(needed) {
            defer { memory.give(needed) }
            try inMemory(chunks, total: total, scanlines: scanlines, info: info)
            return .inMemory
        }
        try streamed(chunks, scanlines: scanlines, info: info)
        return .streamed
    }

    /// libdeflate wants the stream in one piece: IDAT chunks past the first are copied together.
    private static func inMemory(
        _ chunks: [UnsafeRawBufferPointer], total: Int, scanlines: PNGScanlines, info: PNGInfo
    ) throws(PNGValidationError) {
        let expected = scanlines.byteCount
        let joined: UnsafeMutableRawBufferPointer? = chunks.count == 1 ? nil : .allocate(byteCount: total, alignment: 16)
        defer { joined?.deallocate() }
        if let joined {
            var offset = 0
            for chunk in chunks {
                UnsafeMutableRawBufferPointer(rebasing: joined[offset..<offset + chunk.count]).copyMemory(from: chunk)
                offset += chunk.count
            }
        }
        let stream = joined.map(UnsafeRawBufferPointer.init) ?? chunks[0]
        let rows = UnsafeMutableRawBufferPointer.allocate(byteCount: max(expected, 1), alignment: 16)
        defer { rows.deallocate() }
        guard let decompressor = libdeflate_alloc_decompressor() else {
            throw .structure("cannot start inflating the image data (out of memory)")
        }
        defer { libdeflate_free_decompressor(decompressor) }
        var consumed = 0, produced = 0
        let deflate = UnsafeRawBufferPointer(rebasing: stream[2...])
        let result = libdeflate_deflate_decompress_ex(
            decompressor, deflate.baseAddress, deflate.count, rows.baseAddress, expected, &consumed, &produced)
        switch result {
        case LIBDEFLATE_SUCCESS: break
        case LIBDEFLATE_INSUFFICIENT_SPACE:
            throw .structure("image data is longer than its \(info.width)×\(info.height) header says")
        default:
            throw .structure("image data does not inflate: invalid deflate data, or it ends early")
        }
        guard produced == expected else { throw .structure("image data holds \(produced) bytes, the header says \(expected)") }
        let trailer = deflate.count - consumed
        guard trailer >= 4 else { throw .structure("image data lacks its zlib checksum") }
        guard trailer == 4 else { throw .structure("image data continues after the end of its zlib stream") }
        let stored = deflate[consumed...].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        guard libdeflate_adler32(1, rows.baseAddress, expected) == stored else {
            throw .structure("image data fails its Adler-32 checksum")
        }
        var filters = ScanlineFilterCheck(scanlines)
        try filters.consume(UnsafeRawBufferPointer(rebasing: rows[..<expected]))
    }

    /// zlib through a 64 KiB scratch buffer: slower, but the memory used does not grow with the image.
    private static func streamed(_ chunks: [UnsafeRawBufferPointer], scanlines: PNGScanlines, info: PNGInfo) throws(PNGValidationError) {
        let expected = scanlines.byteCount
        var filters = ScanlineFilterCheck(scanlines)
        var stream = z_stream()
        guard inflateInit_(&stream, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw .structure("cannot start inflating the image data")
        }
        defer { inflateEnd(&stream) }
        let scratchSize = 64 * 1024
        let scratch = UnsafeMutablePointer<UInt8>.allocate(capacity: scratchSize)
        defer { scratch.deallocate() }
        var produced = 0
        var ended = false
        for chunk in chunks {
            guard !ended else { throw .structure("image data continues after the end of its zlib stream") }
            stream.next_in = UnsafeMutablePointer(mutating: chunk.baseAddress!.assumingMemoryBound(to: UInt8.self))
            stream.avail_in = UInt32(chunk.count)
            while stream.avail_in > 0 && !ended {
                stream.next_out = scratch
                stream.avail_out = UInt32(scratchSize)
                let code = inflate(&stream, Z_NO_FLUSH)
                let output = scratchSize - Int(stream.avail_out)
                produced += output
                if produced > expected { throw .structure("image data is longer than its \(info.width)×\(info.height) header says") }
                try filters.consume(UnsafeRawBufferPointer(start: scratch, count: output))
                switch code {
                case Z_STREAM_END:
                    ended = true
                    guard stream.avail_in == 0 else { throw .structure("image data continues after the end of its zlib stream") }
                case Z_OK, Z_BUF_ERROR: continue
                case Z_DATA_ERROR where stream.msg.map { String(cString: $0) } == "incorrect data check":
                    throw .structure("image data fails its Adler-32 checksum")
                default:
                    let reason = stream.msg.map { String(cString: $0) } ?? "zlib error \(code)"
                    throw .structure("image data does not inflate: \(reason)")
                }
            }
        }
        guard ended else {
            if produced == expected { throw .structure("image data lacks its zlib checksum") }
            throw .structure("image data ends early (\(produced) of \(expected) bytes)")
        }
        guard produced == expected else { throw .structure("image data holds \(produced) bytes, the header says \(expected)") }
    }
}
