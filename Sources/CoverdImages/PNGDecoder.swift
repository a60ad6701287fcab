import CPNG

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
