import CPNG
#if canImport(Glibc)
import Glibc
#endif

/// Decodes an already validated PNG to 8-bit pixels with libpng's simplified
/// API (palette, 16-bit and tRNS handled by libpng), for covers that must be
/// scaled down. The validator has checked the dimensions against the limits.
struct PNGDecoder {
    func decode(_ body: [UInt8]) throws(CoverImageError) -> PixelImage {
        try body.withUnsafeBufferPointer { bytes throws(CoverImageError) -> PixelImage in
            // libpng reads from the caller's memory until the image is freed: both within this scope.
            let handle = PNGImageHandle()
            return try decode(UnsafeRawBufferPointer(bytes), into: handle)
        }
    }

    private func decode(_ bytes: UnsafeRawBufferPointer, into handle: PNGImageHandle) throws(CoverImageError) -> PixelImage {
        guard png_image_begin_read_from_memory(handle.image, bytes.baseAddress, bytes.count) != 0 else {
            throw .decodeFailed(.png, PNGDecoder.message(handle.image.pointee))
        }
        let image = handle.image.pointee
        let hasAlpha = image.format & 0x01 != 0, isColor = image.format & 0x02 != 0
        let (format, channels): (UInt32, Int) =
            switch (isColor, hasAlpha) {
            case (false, false): (COVERD_PNG_FORMAT_GRAY, 1)
            case (false, true), (true, true): (COVERD_PNG_FORMAT_RGBA, 4)  // Gray with alpha goes out as RGBA.
            case (true, false): (COVERD_PNG_FORMAT_RGB, 3)
            }
        handle.image.pointee.format = format
        let width = Int(image.width), height = Int(image.height)
        var pixels = [UInt8](repeating: 0, count: width * height * channels)
        let finished = pixels.withUnsafeMutableBytes { png_image_finish_read(handle.image, nil, $0.baseAddress, Int32(width * channels), nil) }
        guard finished != 0 else { throw .decodeFailed(.png, PNGDecoder.message(handle.image.pointee)) }
        return PixelImage(width: width, height: height, channels: channels, pixels: pixels)
    }

    private static func message(_ image: png_image) -> String {
        withUnsafeBytes(of: image.message) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
    }
}

/// Owns one libpng simplified-API reader, at a stable address (libpng keeps
/// pointers to it between calls); freed in `deinit`.
private final class PNGImageHandle {
    let image: UnsafeMutablePointer<png_image>

    init() {
        image = .allocate(capacity: 1)
        image.initialize(to: png_image())
        image.pointee.version = COVERD_PNG_IMAGE_VERSION
    }

    deinit {
        png_image_free(image)
        image.deinitialize(count: 1)
        image.deallocate()
    }
}

/// Encodes pixels as an 8-bit PNG with libpng: gray, RGB or RGBA as the
/// pixels are, at the configured zlib level, with no metadata but `tEXt`
/// chunks for what the caller names (the source URL and format).
struct PNGEncoder {
    var compressionLevel: Int

    /// The PNG colour type `encode` writes for pixels of `channels` channels.
    static func colorType(channels: Int) -> Int32 {
        switch channels {
        case 1: PNG_COLOR_TYPE_GRAY
        case 3: PNG_COLOR_TYPE_RGB
        default: PNG_COLOR_TYPE_RGB_ALPHA
        }
    }

    func encode(_ image: PixelImage, text: [(key: String, value: String)]) throws(CoverImageError) -> [UInt8] {
        let colorType = PNGEncoder.colorType(channels: image.channels)
        // tEXt holds Latin-1 without NUL; keywords are 1–79 printable characters.
        let keys = text.map { PNGEncoder.latin1($0.key.unicodeScalars.filter { (0x20...0x7E).contains($0.value) }.prefix(79)) }
        let values = text.map { PNGEncoder.latin1($0.value.unicodeScalars) }
        defer { (keys + values).forEach { $0.deallocate() } }
        var output = coverd_png_output()
        defer { free(output.data) }
        let code = image.pixels.withUnsafeBufferPointer { pixels in
            keys.map { UnsafePointer($0) }.withUnsafeBufferPointer { keyPointers in
                values.map { UnsafePointer($0) }.withUnsafeBufferPointer { valuePointers in
                    coverd_png_encode(
                        pixels.baseAddress, UInt32(image.width), UInt32(image.height), colorType, image.width * image.channels,
                        Int32(compressionLevel), keyPointers.baseAddress, valuePointers.baseAddress, Int32(text.count), &output)
                }
            }
        }
        guard code == 0, let data = output.data else {
            let message = withUnsafeBytes(of: output.message) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
            throw .encodeFailed(message.isEmpty ? "libpng failed" : message)
        }
        return Array(UnsafeBufferPointer(start: data, count: output.size))
    }

    /// A NUL-terminated Latin-1 copy; characters outside Latin-1 (and NUL) become "?".
    private static func latin1(_ scalars: some Sequence<Unicode.Scalar>) -> UnsafeMutablePointer<CChar> {
        let bytes = scalars.map { $0.value <= 0xFF && $0.value != 0 ? CChar(bitPattern: UInt8($0.value)) : CChar(UInt8(ascii: "?")) } + [0]
        let copy = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count)
        copy.initialize(from: bytes, count: bytes.count)
        return copy
    }
}
