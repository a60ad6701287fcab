import CPixman
#if canImport(Glibc)
import Glibc
#endif

/// Scales pixels down with pixman's separable convolution (after a box
/// pre-reduction when the factor is large): a box reconstruction sampled
/// through a Lanczos-3 window, which averages every
/// source pixel that falls under a destination pixel (no aliasing when
/// shrinking a lot) and keeps edges sharp. Edges repeat outwards (PAD) so the
/// border is not darkened. Alpha is premultiplied while filtering so that
/// transparent pixels do not bleed their colour.
struct ImageResampler {
    /// The size that fits `maxDimension` per side, aspect kept; at least 1×1.
    static func fitting(width: Int, height: Int, maxDimension: Int) -> (width: Int, height: Int) {
        guard width > maxDimension || height > maxDimension else { return (width, height) }
        if width >= height {
            return (maxDimension, max(1, (height * maxDimension + width / 2) / width))
        }
        return (max(1, (width * maxDimension + height / 2) / height), maxDimension)
    }

    func scale(_ image: PixelImage, toWidth width: Int, height: Int) throws(CoverImageError) -> PixelImage {
        guard width != image.width || height != image.height else { return image }
        let format = image.channels == 1 ? PIXMAN_a8 : PIXMAN_a8r8g8b8
        guard var current = PixmanSurface(format: format, width: image.width, height: image.height) else {
            throw .scaleFailed("cannot allocate \(image.width)×\(image.height)")
        }
        current.load(image)
        // The Lanczos pass reads about (6 × scale)² source pixels per output pixel; a box
        // reduction by a whole factor first brings a large reduction within 2–3× of the
        // target, so a 50-megapixel cover costs a few passes over its pixels, not thousands.
        let factor = min(image.width / width, image.height / height) / 2
        if factor >= 2 {
            current = try pass(current, toWidth: (image.width + factor - 1) / factor, height: (image.height + factor - 1) / factor,
                               sample: PIXMAN_KERNEL_BOX)
        }
        return try pass(current, toWidth: width, height: height, sample: PIXMAN_KERNEL_LANCZOS3).unload(channels: image.channels)
    }

    /// One pixman composite of `source` scaled onto a new surface, premultiplied throughout.
    private func pass(_ source: PixmanSurface, toWidth width: Int, height: Int, sample: pixman_kernel_t) throws(CoverImageError) -> PixmanSurface {
        guard let target = PixmanSurface(format: source.format, width: width, height: height) else {
            throw .scaleFailed("cannot allocate \(width)×\(height)")
        }
        let scaleX = Double(source.width) / Double(width), scaleY = Double(source.height) / Double(height)
        var transform = pixman_transform()
        pixman_transform_init_scale(&transform, coverd_pixman_fixed(scaleX), coverd_pixman_fixed(scaleY))
        guard pixman_image_set_transform(source.image, &transform) != 0 else { throw .scaleFailed("pixman refused the transform") }
        pixman_image_set_repeat(source.image, PIXMAN_REPEAT_PAD)
        var count: Int32 = 0
        guard let parameters = pixman_filter_create_separable_convolution(
            &count, coverd_pixman_fixed(scaleX), coverd_pixman_fixed(scaleY),
            PIXMAN_KERNEL_BOX, PIXMAN_KERNEL_BOX, sample, sample, 4, 4)
        else { throw .scaleFailed("pixman cannot build the filter") }
        defer { free(parameters) }  // pixman_image_set_filter copies them
        guard pixman_image_set_filter(source.image, PIXMAN_FILTER_SEPARABLE_CONVOLUTION, parameters, count) != 0 else {
            throw .scaleFailed("pixman refused the filter")
        }
        pixman_image_composite32(PIXMAN_OP_SRC, source.image, nil, target.image, 0, 0, 0, 0, 0, 0, Int32(width), Int32(height))
        return target
    }
}

/// Owns one pixman image and the pixel memory under it (pixman does not copy
/// it); both are released in `deinit`. Rows are padded to 4 bytes as pixman requires.
private final class PixmanSurface {
    let image: OpaquePointer
    let bits: UnsafeMutableRawPointer
    let width: Int, height: Int, stride: Int
    let bytesPerPixel: Int
    let format: pixman_format_code_t

    init?(format: pixman_format_code_t, width: Int, height: Int) {
        self.format = format
        bytesPerPixel = format == PIXMAN_a8 ? 1 : 4
        stride = (width * bytesPerPixel + 3) & ~3
        self.width = width
        self.height = height
        bits = UnsafeMutableRawPointer.allocate(byteCount: max(4, stride * height), alignment: 16)
        guard let image = pixman_image_create_bits(
            format, Int32(width), Int32(height), bits.assumingMemoryBound(to: UInt32.self), Int32(stride))
        else {
            bits.deallocate()
            return nil
        }
        self.image = image
    }

    deinit {
        pixman_image_unref(image)
        bits.deallocate()
    }

    /// Gray goes in as a8; RGB as opaque ARGB; RGBA premultiplied (pixman's native form).
    func load(_ source: PixelImage) {
        source.pixels.withUnsafeBufferPointer { pixels in
            for y in 0..<height {
                let row = bits + y * stride
                let from = y * width * source.channels
                if source.channels == 1 {
                    row.copyMemory(from: pixels.baseAddress! + from, byteCount: width)
                    continue
                }
                let words = row.assumingMemoryBound(to: UInt32.self)
                for x in 0..<width {
                    let at = from + x * source.channels
                    var r = UInt32(pixels[at]), g = UInt32(pixels[at + 1]), b = UInt32(pixels[at + 2])
                    let a: UInt32 = source.channels == 4 ? UInt32(pixels[at + 3]) : 255
                    if a != 255 { (r, g, b) = ((r * a + 127) / 255, (g * a + 127) / 255, (b * a + 127) / 255) }
                    words[x] = a << 24 | r << 16 | g << 8 | b
                }
            }
        }
    }

    /// Back to straight (un-premultiplied) channels in the caller's layout.
    func unload(channels: Int) -> PixelImage {
        var out = [UInt8](repeating: 0, count: width * height * channels)
        out.withUnsafeMutableBufferPointer { pixels in
            for y in 0..<height {
                let row = bits + y * stride
                let to = y * width * channels
                if channels == 1 {
                    UnsafeMutableRawPointer(pixels.baseAddress! + to).copyMemory(from: row, byteCount: width)
                    continue
                }
                let words = row.assumingMemoryBound(to: UInt32.self)
                for x in 0..<width {
                    let word = words[x], at = to + x * channels
                    let a = word >> 24
                    var r = word >> 16 & 0xFF, g = word >> 8 & 0xFF, b = word & 0xFF
                    if channels == 4 {
                        if a == 0 {
                            (r, g, b) = (0, 0, 0)
                        } else if a != 255 {
                            (r, g, b) = (min(255, (r * 255 + a / 2) / a), min(255, (g * 255 + a / 2) / a), min(255, (b * 255 + a / 2) / a))
                        }
                        pixels[at + 3] = UInt8(a)
                    }
                    pixels[at] = UInt8(r)
                    pixels[at + 1] = UInt8(g)
                    pixels[at + 2] = UInt8(b)
                }
            }
        }
        return PixelImage(width: width, height: height, channels: channels, pixels: out)
    }
}
