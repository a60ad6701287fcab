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
        guard let surface = PixmanSurface(channels: image.channels, width: image.width, height: image.height) else {
            throw .scaleFailed("cannot allocate \(image.width)×\(image.height)")
        }
        surface.load(image)
        return try scale(surface, toWidth: width, height: height)
    }

    /// Pixels already in pixman's layout (the JPEG decoder writes them there), scaled without a repack on the way in.
    func scale(_ surface: PixmanSurface, toWidth width: Int, height: Int) throws(CoverImageError) -> PixelImage {
        guard width != surface.width || height != surface.height else { return surface.unload() }
        var current = surface
        // The Lanczos pass reads about (6 × scale)² source pixels per output pixel; a box
        // reduction by a whole factor first brings a large reduction within 2–3× of the
        // target, so a 50-megapixel cover costs a few passes over its pixels, not thousands.
        let factor = min(surface.width / width, surface.height / height) / 2
        if factor >= 2 {
            current = try pass(current, toWidth: (surface.width + factor - 1) / factor, height: (surface.height + factor - 1) / factor,
                               sample: PIXMAN_KERNEL_BOX)
        }
        return try pass(current, toWidth: width, height: height, sample: PIXMAN_KERNEL_LANCZOS3).unload()
    }

    /// One pixman composite of `source` scaled onto a new surface, premultiplied throughout.
    private func pass(_ source: PixmanSurface, toWidth width: Int, height: Int, sample: pixman_kernel_t) throws(CoverImageError) -> PixmanSurface {
        guard let target = PixmanSurface(channels: source.channels, width: width, height: height) else {
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
