/// Encodes pixels as an 8-bit PNG: gray, RGB or RGBA as the pixels are, no
/// metadata but `tEXt` chunks for what the caller names (the source URL and
/// format). Each row gets libpng's filter choice (`PNGRowFilter`); image
/// data of up to `inMemoryLimit` filtered bytes is deflated by libdeflate in
/// one call, larger image data by zlib, streamed, so the filtered rows held at
/// once stay bounded (the pixels and the PNG made are held whole either way).
///
/// `compressionLevel` keeps zlib's meaning (0 to 9): libdeflate's levels 1 to 9
/// are zlib's scale, the same number is used for either, and 0 stores the rows
/// unfiltered and uncompressed. libdeflate's level 6 is about zlib's size at a
/// fraction of its time (bench/HISTORY.md, "the PNG encoder (#27)").
struct PNGEncoder {
    var compressionLevel: Int
    /// Filtered rows up to this size are deflated whole (a 1,600×1,700 RGB cover):
    /// with the pixels and the zlib stream that is about three such buffers per
    /// conversion, and conversions run one per core, within the daemon's memory goal.
    var inMemoryLimit = 8 << 20
    /// Looked at between batches of rows; libdeflate's one call cannot be stopped, but is bounded by `inMemoryLimit`.
    var cancellation: ConversionCancellation?

    /// Rows filtered between looks at `cancellation` on the whole path.
    private static let rowsPerLook = 64

    /// Bytes of filtered rows (whole rows, at least one) handed to zlib at a time on the streamed path: fewer, larger calls.
    private static let streamedBatch = 256 * 1024

    /// The PNG colour type `encode` writes for pixels of `channels` channels (1, 3 or 4).
    static func colorType(channels: Int) -> Int {
        precondition([1, 3, 4].contains(channels), "the encoder writes gray, RGB or RGBA, not \(channels) channels")
        return channels == 1 ? 0 : channels == 3 ? 2 : 6
    }

    func encode(_ image: PixelImage, text: [(key: String, value: String)]) throws(CoverImageError) -> [UInt8] {
        let level = min(9, max(0, compressionLevel))
        let rowBytes = image.width * image.channels
        let filtered = image.height * (rowBytes + 1)
        let header = PNGEncoder.header(image)
        let textChunks = text.compactMap { PNGEncoder.textChunk(key: $0.key, value: $0.value) }
        let prefix = 8 + PNGChunkWriter.size(ofChunkHolding: header.count)
            + textChunks.reduce(0) { $0 + PNGChunkWriter.size(ofChunkHolding: $1.count) }
        let rows = PNGRowFilter(rowBytes: rowBytes, bytesPerPixel: image.channels)
        if filtered <= inMemoryLimit {
            return try deflateWhole(image, rows: rows, level: level, filteredCount: filtered) { compressed in
                // Sized exactly: the cover is held until it is written, and copied nowhere else.
                var writer = PNGChunkWriter(capacity: prefix + PNGChunkWriter.size(ofChunkHolding: compressed.count) + 12)
                PNGEncoder.appendHead(&writer, header: header, textChunks: textChunks)
                writer.append("IDAT", compressed)
                writer.append("IEND", [])
                return writer.bytes
            }
        }
        // A guess at the PNG's size, capped: the array grows if it is more, and an image at the pixel limit reserves no 100 MB up front.
        var writer = PNGChunkWriter(capacity: prefix + min(filtered / 2, inMemoryLimit))
        PNGEncoder.appendHead(&writer, header: header, textChunks: textChunks)
        try deflateStreamed(image, rows: rows, level: level, into: &writer)
        writer.append("IEND", [])
        return writer.bytes
    }

    private static func appendHead(_ writer: inout PNGChunkWriter, header: [UInt8], textChunks: [[UInt8]]) {
        writer.append("IHDR", header)
        for chunk in textChunks { writer.append("tEXt", chunk) }
    }

    /// Filters every row into one buffer, deflates it in a single libdeflate call, and hands the zlib stream to `body`.
    private func deflateWhole<Result>(
        _ image: PixelImage, rows: PNGRowFilter, level: Int, filteredCount: Int, body: (UnsafeRawBufferPointer) -> Result
    ) throws(CoverImageError) -> Result {
        guard let compressor = DeflateCompressor(level: level) else {
            throw .encodeFailed("libdeflate cannot start at level \(level) (out of memory)")
        }
        let filtered = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, filteredCount), alignment: 16)
        defer { filtered.deallocate() }
        let cancelled = image.pixels.withUnsafeBufferPointer { pixels -> Bool in
            guard let base = pixels.baseAddress else { return false }
            guard let out = filtered.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return false }
            for y in 0..<image.height {
                if y % PNGEncoder.rowsPerLook == 0, cancellation?.isCancelled == true { return true }
                let row = base + y * rows.rowBytes
                rows.filter(row, previous: y > 0 ? row - rows.rowBytes : nil, adaptive: level > 0, into: out + y * (rows.rowBytes + 1))
            }
            return false
        }
        if cancelled { throw .cancelled }
        let input = UnsafeRawBufferPointer(rebasing: filtered[..<filteredCount])
        let compressed = UnsafeMutableRawBufferPointer.allocate(byteCount: compressor.zlibBound(filteredCount), alignment: 16)
        defer { compressed.deallocate() }
        guard let written = compressor.zlibCompress(input, into: compressed) else {
            throw .encodeFailed("libdeflate's output did not fit its own bound (\(filteredCount) bytes of rows)")
        }
        return body(UnsafeRawBufferPointer(rebasing: compressed[..<written]))
    }

    /// Filters a batch of rows at a time and feeds them to zlib; each piece of output becomes an IDAT chunk.
    private func deflateStreamed(_ image: PixelImage, rows: PNGRowFilter, level: Int, into writer: inout PNGChunkWriter) throws(CoverImageError) {
        let stream = try ZlibDeflateStream(level: level)
        let stride = rows.rowBytes + 1
        let batchRows = max(1, PNGEncoder.streamedBatch / stride)
        let batch = UnsafeMutablePointer<UInt8>.allocate(capacity: batchRows * stride)
        defer { batch.deallocate() }
        var failure: CoverImageError?
        image.pixels.withUnsafeBufferPointer { pixels in
            guard let base = pixels.baseAddress else { return }
            var y = 0
            while y < image.height && failure == nil {
                if cancellation?.isCancelled == true {
                    failure = .cancelled
                    return
                }
                let count = min(batchRows, image.height - y)
                for offset in 0..<count {
                    let row = base + (y + offset) * rows.rowBytes
                    rows.filter(row, previous: y + offset > 0 ? row - rows.rowBytes : nil, adaptive: level > 0, into: batch + offset * stride)
                }
                y += count
                do throws(CoverImageError) {
                    try stream.compress(UnsafeRawBufferPointer(start: batch, count: count * stride), finish: y == image.height) {
                        writer.append("IDAT", $0)
                    }
                } catch {
                    failure = error
                }
            }
        }
        if let failure { throw failure }
    }

    /// IHDR: width, height, bit depth 8, colour type, deflate, adaptive filtering, no interlace.
    private static func header(_ image: PixelImage) -> [UInt8] {
        let width = UInt32(image.width), height = UInt32(image.height)
        return [
            UInt8(width >> 24), UInt8(width >> 16 & 0xFF), UInt8(width >> 8 & 0xFF), UInt8(width & 0xFF),
            UInt8(height >> 24), UInt8(height >> 16 & 0xFF), UInt8(height >> 8 & 0xFF), UInt8(height & 0xFF),
            8, UInt8(colorType(channels: image.channels)), 0, 0, 0,
        ]
    }

    /// A `tEXt` chunk's data: a keyword of 1 to 79 printable ASCII characters (coverd's are constants), NUL, and Latin-1
    /// text (characters outside Latin-1, and NUL, become "?"); nil when no keyword character is left.
    static func textChunk(key: String, value: String) -> [UInt8]? {
        let keyword = key.unicodeScalars.filter { (0x20...0x7E).contains($0.value) }.prefix(79).map { UInt8($0.value) }
        guard !keyword.isEmpty else { return nil }
        let text = value.unicodeScalars.map { $0.value <= 0xFF && $0.value != 0 ? UInt8($0.value) : UInt8(ascii: "?") }
        return keyword + [0] + text
    }
}
