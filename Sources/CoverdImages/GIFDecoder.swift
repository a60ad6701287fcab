import CGIF

/// Decodes the first frame of a GIF with giflib, onto its logical screen:
/// transparent where the frame does not reach or its transparent index says
/// so. Screen and frame sizes are checked against the limits before the
/// canvas is allocated; giflib decodes one row at a time.
struct GIFDecoder {
    let limits: ImageLimits

    func decode(_ body: [UInt8]) throws(CoverImageError) -> PixelImage {
        let source = GIFSource(body)
        var error: Int32 = 0
        let context = Unmanaged.passUnretained(source).toOpaque()
        guard let file = DGifOpen(context, gifRead, &error) else { throw .decodeFailed(.gif, GIFDecoder.reason(error)) }
        let handle = GIFHandle(file)
        // giflib calls back into `source` until the handle is closed.
        return try withExtendedLifetime((source, handle)) { () throws(CoverImageError) -> PixelImage in try firstFrame(handle.file) }
    }

    private func firstFrame(_ gif: UnsafeMutablePointer<GifFileType>) throws(CoverImageError) -> PixelImage {
        let screenWidth = Int(gif.pointee.SWidth), screenHeight = Int(gif.pointee.SHeight)
        try limits.check(width: screenWidth, height: screenHeight, kind: .gif)
        var transparent: Int?
        while true {
            var record = UNDEFINED_RECORD_TYPE
            guard DGifGetRecordType(gif, &record) == GIF_OK else { throw failure(gif) }
            switch record {
            case IMAGE_DESC_RECORD_TYPE:
                guard DGifGetImageDesc(gif) == GIF_OK else { throw failure(gif) }
                return try frame(gif, screenWidth: screenWidth, screenHeight: screenHeight, transparent: transparent)
            case EXTENSION_RECORD_TYPE:
                var code: Int32 = 0
                var block: UnsafeMutablePointer<GifByteType>?
                guard DGifGetExtension(gif, &code, &block) == GIF_OK else { throw failure(gif) }
                // Graphic control: bytes [length, flags, delay, delay, index]; bit 0 of flags marks a transparent index.
                // The last one before the frame applies.
                if code == GRAPHICS_EXT_FUNC_CODE, let block, block[0] >= 4 { transparent = block[1] & 1 == 1 ? Int(block[4]) : nil }
                while block != nil {
                    guard DGifGetExtensionNext(gif, &block) == GIF_OK else { throw failure(gif) }
                }
            case TERMINATE_RECORD_TYPE:
                throw .decodeFailed(.gif, "no image in the file")
            default:
                throw .decodeFailed(.gif, "unexpected record type \(record.rawValue)")
            }
        }
    }

    private func frame(
        _ gif: UnsafeMutablePointer<GifFileType>, screenWidth: Int, screenHeight: Int, transparent: Int?
    ) throws(CoverImageError) -> PixelImage {
        let desc = gif.pointee.Image
        let left = Int(desc.Left), top = Int(desc.Top), width = Int(desc.Width), height = Int(desc.Height)
        try limits.check(width: width, height: height, kind: .gif)
        guard let map = desc.ColorMap ?? gif.pointee.SColorMap, let colors = map.pointee.Colors else {
            throw .decodeFailed(.gif, "no colour table")
        }
        let colorCount = Int(map.pointee.ColorCount)
        var canvas = [UInt8](repeating: 0, count: screenWidth * screenHeight * 4)
        var line = [GifPixelType](repeating: 0, count: width)
        // Interlaced frames store rows in four passes: every 8th from 0, every 8th from 4, every 4th from 2, every 2nd from 1.
        let order: [Int] = desc.Interlace
            ? [(0, 8), (4, 8), (2, 4), (1, 2)].flatMap { start, step in Array(stride(from: start, to: height, by: step)) }
            : Array(0..<height)
        var covered = true
        for row in order {
            let code = line.withUnsafeMutableBufferPointer { DGifGetLine(gif, $0.baseAddress, Int32(width)) }
            guard code == GIF_OK else { throw failure(gif) }
            let y = top + row
            guard y < screenHeight else { continue }
            for x in 0..<width where left + x < screenWidth {
                let index = Int(line[x])
                let at = (y * screenWidth + left + x) * 4
                if index == transparent || index >= colorCount {
                    covered = false  // Left transparent (an index past the table is shown as nothing, as browsers do).
                    continue
                }
                canvas[at] = colors[index].Red
                canvas[at + 1] = colors[index].Green
                canvas[at + 2] = colors[index].Blue
                canvas[at + 3] = 255
            }
        }
        let image = PixelImage(width: screenWidth, height: screenHeight, channels: 4, pixels: canvas)
        let fillsScreen = left == 0 && top == 0 && width >= screenWidth && height >= screenHeight
        return covered && fillsScreen ? image.droppingAlpha() : image
    }

    private func failure(_ gif: UnsafeMutablePointer<GifFileType>) -> CoverImageError {
        .decodeFailed(.gif, GIFDecoder.reason(gif.pointee.Error))
    }

    static func reason(_ code: Int32) -> String {
        let message = GifErrorString(code).map { String(cString: $0) } ?? "giflib error \(code)"
        // giflib reads through gifRead, which only comes up short at the end of the bytes.
        return code == D_GIF_ERR_READ_FAILED ? "truncated (\(message))" : message
    }
}

/// Owns one giflib decoder; closed in `deinit`.
private final class GIFHandle {
    let file: UnsafeMutablePointer<GifFileType>

    init(_ file: UnsafeMutablePointer<GifFileType>) { self.file = file }

    deinit {
        var error: Int32 = 0
        DGifCloseFile(file, &error)
    }
}

/// The bytes giflib reads, through `gifRead`.
private final class GIFSource {
    let bytes: [UInt8]
    var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }
}

/// giflib's input callback: copies up to `count` bytes; fewer at the end (giflib reports the short read).
private func gifRead(_ gif: UnsafeMutablePointer<GifFileType>?, _ buffer: UnsafeMutablePointer<GifByteType>?, _ count: Int32) -> Int32 {
    guard let gif, let buffer, let context = gif.pointee.UserData, count > 0 else { return 0 }
    let source = Unmanaged<GIFSource>.fromOpaque(context).takeUnretainedValue()
    let available = min(Int(count), source.bytes.count - source.offset)
    guard available > 0 else { return 0 }
    source.bytes.withUnsafeBufferPointer { bytes in
        buffer.update(from: bytes.baseAddress! + source.offset, count: available)
    }
    source.offset += available
    return Int32(available)
}
