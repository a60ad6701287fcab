/// Why a downloaded body cannot become a cover.
public enum CoverImageError: Error, Sendable, Equatable, CustomStringConvertible {
    case notAnImage(ImageKind)
    case unsupportedFormat(ImageKind)
    case invalidPNG(PNGValidationError)

    public var description: String {
        switch self {
        case .notAnImage(let kind):
            switch kind {
            case .empty: return "not an image (empty body)"
            case .html: return "not an image (HTML)"
            default: return "not an image"
            }
        case .unsupportedFormat(let kind): return "unsupported image format: \(kind.rawValue)"
        case .invalidPNG(let error): return error.description
        }
    }
}

/// A body that passed inspection, ready to be written as `<id>.png`.
public struct PreparedCover: Sendable {
    public var png: [UInt8]
    public var info: PNGInfo
    public var sourceKind: ImageKind
}

/// Turns a downloaded body into PNG bytes for the cache: the kind is decided
/// by the bytes; a PNG is validated and kept byte for byte.
public struct CoverImagePipeline: Sendable {
    public var limits: ImageLimits

    public init(limits: ImageLimits = ImageLimits()) {
        self.limits = limits
    }

    public func prepare(_ body: [UInt8]) throws(CoverImageError) -> PreparedCover {
        let kind = ImageKind(sniffing: body)
        switch kind {
        case .png:
            do {
                let info = try PNGValidator(limits: limits, imageData: .download).validate(body)
                return PreparedCover(png: body, info: info, sourceKind: .png)
            } catch {
                throw .invalidPNG(error)
            }
        case _ where kind.isImage:
            throw .unsupportedFormat(kind)
        default:
            throw .notAnImage(kind)
        }
    }
}
