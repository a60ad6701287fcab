/// How converted covers are written.
public struct ImageOutput: Sendable, Equatable {
    /// Covers larger than this per side are scaled down, aspect kept; nil: never.
    public var maxDimension: Int?
    /// zlib level for the PNGs coverd encodes (0–9).
    public var compressionLevel = 6

    public init(maxDimension: Int? = nil, compressionLevel: Int = 6) {
        self.maxDimension = maxDimension
        self.compressionLevel = compressionLevel
    }
}

/// A body that passed inspection, ready to be written as `<id>.png`.
public struct PreparedCover: Sendable {
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
/// the coordinator's decode queues, never on the transfer loop.
public struct CoverImagePipeline: Sendable {
    public var limits: ImageLimits
    public var output: ImageOutput

    /// `tEXt` keywords of a converted cover.
    public static let sourceURLKeyword = "Source URL"
    public static let sourceFormatKeyword = "Source Format"

    public init(limits: ImageLimits = ImageLimits(), output: ImageOutput = ImageOutput()) {
        self.limits = limits
        self.output = output
    }

    /// True when `body` will be decoded rather than only validated: the caller
    /// runs such work where a slow decode cannot hold up plain PNGs.
    public func decodes(_ body: [UInt8]) -> Bool {
        switch ImageKind(sniffing: body) {
        case .jpeg, .webp, .gif: return true
        case .png: return output.maxDimension != nil
        default: return false
        }
    }

    /// `sourceURL` is recorded in a converted cover's `tEXt` chunk.
    public func prepare(_ body: [UInt8], sourceURL: String? = nil) throws(CoverImageError) -> PreparedCover {
        let kind = ImageKind(sniffing: body)
        let image: PixelImage
        switch kind {
        case .png:
            let info: PNGInfo
            do {
                info = try PNGValidator(limits: limits, imageData: .download).validate(body)
            } catch {
                throw .invalidPNG(error)
            }
            guard let maxDimension = output.maxDimension, info.width > maxDimension || info.height > maxDimension else {
                return PreparedCover(png: body, info: info, sourceKind: .png)
            }
            image = try PNGDecoder().decode(body)
        case .jpeg:
            image = try JPEGDecoder(limits: limits).decode(body, maxDimension: output.maxDimension)
        case .webp:
            image = try WebPDecoder(limits: limits).decode(body)
        case .gif:
            image = try GIFDecoder(limits: limits).decode(body)
        case _ where kind.isImage:
            throw .unsupportedFormat(kind)
        default:
            throw .notAnImage(kind)
        }
        return try encode(image, from: kind, sourceURL: sourceURL)
    }

    private func encode(_ decoded: PixelImage, from kind: ImageKind, sourceURL: String?) throws(CoverImageError) -> PreparedCover {
        var image = decoded
        if let maxDimension = output.maxDimension {
            let size = ImageResampler.fitting(width: image.width, height: image.height, maxDimension: maxDimension)
            image = try ImageResampler().scale(image, toWidth: size.width, height: size.height)
        }
        if image.channels == 4, image.isOpaque { image = image.droppingAlpha() }
        var text: [(key: String, value: String)] = []
        if let sourceURL { text.append((CoverImagePipeline.sourceURLKeyword, sourceURL)) }
        text.append((CoverImagePipeline.sourceFormatKeyword, kind.rawValue))
        let png = try PNGEncoder(compressionLevel: output.compressionLevel).encode(image, text: text)
        let colorType = image.channels == 1 ? 0 : image.channels == 3 ? 2 : 6
        let info = PNGInfo(width: image.width, height: image.height, bitDepth: 8, colorType: colorType, interlaced: false)
        return PreparedCover(png: png, info: info, sourceKind: kind)
    }
}
