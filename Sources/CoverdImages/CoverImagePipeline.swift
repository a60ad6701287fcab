/// How converted covers are written.
public struct ImageOutput: Sendable, Equatable {
    /// Covers larger than this per side are scaled down, aspect kept; nil: never.
    public var maxDimension: Int?
    /// Compression level of the PNGs coverd encodes (0–9, zlib's scale; see `PNGEncoder`).
    public var compressionLevel = 6

    public init(maxDimension: Int? = nil, compressionLevel: Int = 6) {
        self.maxDimension = maxDimension
        self.compressionLevel = compressionLevel
    }
}

/// A body that passed inspection, ready to be written as `<id>.png`.
public struct CoverPNG: Sendable {
    public var png: [UInt8]
    /// What the stored PNG's header says.
    public var info: PNGInfo
    public var sourceKind: ImageKind
}

/// Turns a downloaded body into PNG bytes for the cache. The kind is decided
/// by the bytes, never by Content-Type. A PNG is validated and kept byte for
/// byte (unless it must be scaled down); JPEG, WebP and GIF are decoded (their
/// headers checked against the limits first), oriented, scaled if asked, and
/// encoded as an 8-bit PNG recording where they came from.
///
/// Threading: a value with no shared state; decoding is CPU-bound and runs on
/// the coordinator's conversion pool, never on the transfer loop.
public struct CoverImagePipeline: Sendable {
    public var limits: ImageLimits
    public var output: ImageOutput
    /// Shared by every pipeline and check of one daemon (see `InflateMemory`).
    package let inflateMemory: InflateMemory

    /// `tEXt` keywords of a converted cover.
    public static let sourceURLKeyword = "Source URL"
    public static let sourceFormatKeyword = "Source Format"

    public init(limits: ImageLimits = ImageLimits(), output: ImageOutput = ImageOutput()) {
        self.init(limits: limits, output: output, inflateMemory: InflateMemory())
    }

    package init(limits: ImageLimits, output: ImageOutput, inflateMemory: InflateMemory) {
        self.limits = limits
        self.output = output
        self.inflateMemory = inflateMemory
    }

    /// True when `body` will be decoded rather than only validated: the caller
    /// runs such work where a slow decode cannot hold up plain PNGs. For a PNG,
    /// only when its header says it is larger than `maxDimension`.
    public func decodes(_ body: [UInt8]) -> Bool {
        switch ImageKind(sniffing: body) {
        case .jpeg, .webp, .gif: return true
        case .png:
            guard let maxDimension = output.maxDimension, let size = PNGValidator.declaredSize(body) else { return false }
            return size.width > maxDimension || size.height > maxDimension
        default: return false
        }
    }

    /// `sourceURL` is recorded in a converted cover's `tEXt` chunk. Once
    /// `cancellation` is cancelled, a decode or encode under way throws `.cancelled`.
    public func makePNG(
        from body: [UInt8], sourceURL: String? = nil, cancellation: ConversionCancellation? = nil
    ) throws(CoverImageError) -> CoverPNG {
        let kind = ImageKind(sniffing: body)
        let decoded: DecodedImage
        switch kind {
        case .png:
            let info: PNGInfo
            do {
                info = try PNGValidator(limits: limits, inflateMemory: inflateMemory).validate(body)
            } catch {
                throw .invalidPNG(error)
            }
            guard let maxDimension = output.maxDimension, info.width > maxDimension || info.height > maxDimension else {
                return CoverPNG(png: body, info: info, sourceKind: .png)
            }
            decoded = DecodedImage(image: try PNGDecoder().decode(body))
        case .jpeg:
            decoded = try JPEGDecoder(limits: limits, cancellation: cancellation).decode(body, maxDimension: output.maxDimension)
        case .webp:
            decoded = DecodedImage(image: try WebPDecoder(limits: limits).decode(body))
        case .gif:
            decoded = DecodedImage(image: try GIFDecoder(limits: limits).decode(body))
        case _ where kind.isImage:
            throw .unsupportedFormat(kind)
        default:
            throw .notAnImage(kind)
        }
        try cancellation?.check()
        return try encode(decoded, from: kind, sourceURL: sourceURL, cancellation: cancellation)
    }

    /// Scales (in stored orientation, on as few pixels as possible), orients, and encodes.
    private func encode(
        _ decoded: DecodedImage, from kind: ImageKind, sourceURL: String?, cancellation: ConversionCancellation?
    ) throws(CoverImageError) -> CoverPNG {
        var image = try scaled(decoded).oriented(decoded.orientation)
        if image.channels == 4, image.isOpaque { image = image.droppingAlpha() }
        var text: [(key: String, value: String)] = []
        if let sourceURL { text.append((CoverImagePipeline.sourceURLKeyword, sourceURL)) }
        text.append((CoverImagePipeline.sourceFormatKeyword, kind.rawValue))
        let png = try PNGEncoder(compressionLevel: output.compressionLevel, cancellation: cancellation).encode(image, text: text)
        let colorType = PNGEncoder.colorType(channels: image.channels)
        let info = PNGInfo(width: image.width, height: image.height, bitDepth: 8, colorType: colorType, interlaced: false)
        return CoverPNG(png: png, info: info, sourceKind: kind)
    }

    /// The stored pixels, scaled to fit `maxDimension` once oriented (nil: as they are).
    private func scaled(_ decoded: DecodedImage) throws(CoverImageError) -> PixelImage {
        let size = output.maxDimension.map(decoded.storedSize(fitting:))
        switch decoded.pixels {
        case .packed(let image):
            guard let size else { return image }
            return try ImageResampler().scale(image, toWidth: size.width, height: size.height)
        case .pixman(let surface):
            // The JPEG decoder fills a surface only when there is a size to scale to; without one it is unloaded as it is.
            let size = size ?? (surface.width, surface.height)
            return try ImageResampler().scale(surface, toWidth: size.width, height: size.height)
        }
    }
}
