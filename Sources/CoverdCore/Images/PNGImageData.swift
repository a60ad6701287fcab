import CZlib

/// How much of a PNG's compressed image data is inflated to check it.
///
/// Inflating costs far more than everything else a cover goes through: for
/// photo-like PNGs zlib produces about 200 MB/s, so inflating every cover of
/// a 10,000-cover sync took 14 s of CPU against curl's 2 s for the whole
/// download. The daemon therefore checks the stream's start, which catches
/// image data that is not deflate at all (the chunk CRCs already catch damage
/// in transit), and `coverd verify` inflates everything.
public enum ImageDataCheck: Sendable, Equatable {
    /// The zlib header and the first `bytes` of decompressed rows; an image
    /// smaller than that is checked completely.
    case leading(bytes: Int)
    /// The whole stream: it must end where it says, with exactly the rows the header implies.
    case whole

    /// What the daemon checks for each download.
    public static let download = ImageDataCheck.leading(bytes: 4 * 1024)
}

/// Checks a PNG's compressed image data (the IDAT chunks' zlib stream):
/// it must inflate, end where it says, and hold exactly the bytes the header
/// promises, so a file with valid CRCs but garbage or missing pixels is
/// refused. Output goes to a small scratch buffer and is discarded, so the
/// memory used does not grow with the image.
///
/// The zlib header is checked here and the deflate data inflated raw: the
/// stream's Adler-32 is not recomputed, since the chunk CRCs already cover
/// every compressed byte and the checksum cost as much as the CRCs did.
struct PNGImageData {
    /// Decompressed size the header implies: every scanline of every pass, each with its filter byte.
    static func expectedSize(_ info: PNGInfo) -> Int {
        let channels = [0: 1, 2: 3, 3: 1, 4: 2, 6: 4][info.colorType] ?? 1
        let bitsPerPixel = channels * info.bitDepth
        func bytes(width: Int, height: Int) -> Int {
            guard width > 0, height > 0 else { return 0 }
            return height * (1 + (width * bitsPerPixel + 7) / 8)
        }
        guard info.interlaced else { return bytes(width: info.width, height: info.height) }
        // Adam7: the seven passes' starting offsets and steps.
        let passes = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]
        return passes.reduce(0) { total, pass in
            let width = (info.width - pass.0 + pass.2 - 1) / pass.2
            let height = (info.height - pass.1 + pass.3 - 1) / pass.3
            return total + bytes(width: width, height: height)
        }
    }

    /// CMF and FLG of RFC 1950: deflate with a window of at most 32 KiB, a valid check, no preset dictionary.
    private static func checkZlibHeader(_ cmf: UInt8, _ flg: UInt8) throws(PNGValidationError) {
        guard cmf & 0x0F == 8, cmf >> 4 <= 7, (UInt16(cmf) << 8 | UInt16(flg)) % 31 == 0, flg & 0x20 == 0 else {
            throw .structure("image data is not a zlib stream")
        }
    }

    /// Inflates `chunks` (the IDAT payloads, in order) and checks the total.
    static func check(_ chunks: [UnsafeRawBufferPointer], info: PNGInfo, depth: ImageDataCheck) throws(PNGValidationError) {
        let expected = expectedSize(info)
        var budget = Int.max
        if case .leading(let bytes) = depth { budget = bytes }
        var stream = z_stream()
        guard inflateInit2_(&stream, -15, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw .structure("cannot start inflating the image data")
        }
        defer { inflateEnd(&stream) }
        let scratchSize = min(64 * 1024, max(budget, 1024))
        let scratch = UnsafeMutablePointer<UInt8>.allocate(capacity: scratchSize)
        defer { scratch.deallocate() }
        var produced = 0
        var ended = false
        var header: [UInt8] = []
        var trailer = 0
        for whole in chunks where whole.count > 0 {
            var chunk = whole
            if header.count < 2 {
                let taken = min(2 - header.count, chunk.count)
                header += chunk[..<taken]
                chunk = UnsafeRawBufferPointer(rebasing: chunk[taken...])
                if header.count == 2 { try checkZlibHeader(header[0], header[1]) }
                if chunk.isEmpty { continue }
            }
            if ended {
                trailer += chunk.count  // The Adler-32, and nothing more.
                guard trailer <= 4 else { throw .structure("image data continues after the end of its zlib stream") }
                continue
            }
            stream.next_in = UnsafeMutablePointer(mutating: chunk.baseAddress!.assumingMemoryBound(to: UInt8.self))
            stream.avail_in = UInt32(chunk.count)
            while stream.avail_in > 0 && !ended {
                stream.next_out = scratch
                stream.avail_out = UInt32(scratchSize)
                let code = inflate(&stream, Z_NO_FLUSH)
                produced += scratchSize - Int(stream.avail_out)
                if produced > expected { throw .structure("image data is longer than its \(info.width)×\(info.height) header says") }
                if produced >= budget && produced < expected { return }
                switch code {
                case Z_STREAM_END:
                    ended = true
                    trailer = Int(stream.avail_in)
                    guard trailer <= 4 else { throw .structure("image data continues after the end of its zlib stream") }
                case Z_OK, Z_BUF_ERROR: continue
                default:
                    let reason = stream.msg.map { String(cString: $0) } ?? "zlib error \(code)"
                    throw .structure("image data does not inflate: \(reason)")
                }
            }
        }
        guard ended else { throw .structure("image data ends early (\(produced) of \(expected) bytes)") }
        guard trailer == 4 else { throw .structure("image data lacks its zlib checksum") }
        guard produced == expected else { throw .structure("image data holds \(produced) bytes, the header says \(expected)") }
    }
}
