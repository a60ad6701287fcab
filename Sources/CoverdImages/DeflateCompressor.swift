import CDeflate

/// Owns one libdeflate compressor at one level, freed in `deinit`: a whole
/// buffer deflated in one call, much faster than zlib at the same level and
/// about its size on cover rows (bench/HISTORY.md, "the PNG encoder (#27)").
///
/// Not thread-safe (libdeflate's rule): one compressor per encode.
final class DeflateCompressor {
    private let handle: OpaquePointer

    /// nil when libdeflate cannot allocate its tables (out of memory) or refuses the level (0 to 12).
    init?(level: Int) {
        guard let handle = libdeflate_alloc_compressor(Int32(level)) else { return nil }
        self.handle = handle
    }

    deinit { libdeflate_free_compressor(handle) }

    /// The most bytes `zlibCompress` can write for `count` bytes of input.
    func zlibBound(_ count: Int) -> Int {
        libdeflate_zlib_compress_bound(handle, count)
    }

    /// `input` as one zlib stream in `output`; the bytes written, or nil if they did not fit.
    func zlibCompress(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) -> Int? {
        let written = libdeflate_zlib_compress(handle, input.baseAddress, input.count, output.baseAddress, output.count)
        return written > 0 ? written : nil
    }
}
