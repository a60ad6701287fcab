/// A decoder's result: pixels as stored, and how they are meant to be shown.
/// `shownWidth`×`shownHeight` is the full-size picture after orientation,
/// even when the decoder already reduced the pixels (JPEG's DCT scaling), so
/// that the final size is computed from the original, not from a rounded reduction.
struct DecodedImage {
    /// Packed for the encoder, or already in pixman's layout for the resampler
    /// (a JPEG that is to be scaled down is decoded straight into it).
    enum Pixels {
        case packed(PixelImage)
        case pixman(PixmanSurface)
    }

    var pixels: Pixels
    /// EXIF orientation (1–8) still to apply.
    var orientation: Int
    var shownWidth: Int
    var shownHeight: Int

    init(_ pixels: Pixels, orientation: Int, shownWidth: Int, shownHeight: Int) {
        self.pixels = pixels
        self.orientation = orientation
        self.shownWidth = shownWidth
        self.shownHeight = shownHeight
    }

    init(image: PixelImage, orientation: Int = 1, shownWidth: Int? = nil, shownHeight: Int? = nil) {
        self.init(.packed(image), orientation: orientation, shownWidth: shownWidth ?? image.width, shownHeight: shownHeight ?? image.height)
    }

    /// The size to scale the stored pixels to, so that once oriented they fit `maxDimension` per side.
    func storedSize(fitting maxDimension: Int) -> (width: Int, height: Int) {
        let shown = ImageResampler.fitting(width: shownWidth, height: shownHeight, maxDimension: maxDimension)
        return DecodedImage.stored(shown, orientation: orientation)
    }

    /// The stored pixels' size for a picture shown `shown` (orientations 5–8 swap the sides).
    static func stored(_ shown: (width: Int, height: Int), orientation: Int) -> (width: Int, height: Int) {
        orientation >= 5 ? (shown.height, shown.width) : shown
    }
}
