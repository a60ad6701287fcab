/// Why a downloaded body cannot become a cover. Every case says what was
/// wrong with the bytes; the album and URL are added by whoever logs it.
public enum CoverImageError: Error, Sendable, Equatable, CustomStringConvertible {
    case notAnImage(ImageKind)
    case unsupportedFormat(ImageKind)
    case invalidPNG(PNGValidationError)
    /// The decoder's own reason: truncated, corrupt, unsupported variant.
    case decodeFailed(ImageKind, String)
    /// Refused from the header, before any pixel was allocated.
    case tooLarge(width: Int, height: Int, reason: String)
    case encodeFailed(String)
    /// pixman could not scale the pixels down (`images.max_dimension`).
    case scaleFailed(String)
    /// Given up because coverd is stopping (`ConversionCancellation`): nothing is wrong with the bytes.
    case cancelled

    public var description: String {
        switch self {
        case .notAnImage(let kind):
            switch kind {
            case .empty: return "not an image (empty body)"
            // Named both ways: a web page is a body of an unsupported kind, and not an image at all.
            case .html: return "unsupported image format: html (not an image)"
            default: return "not an image (unrecognised content)"
            }
        case .unsupportedFormat(let kind): return "unsupported image format: \(kind.rawValue)"
        case .invalidPNG(let error): return error.description
        case .decodeFailed(let kind, let reason): return "cannot decode \(kind.rawValue): \(reason)"
        case .tooLarge(let width, let height, let reason): return "image is too large (\(width)×\(height); \(reason))"
        case .encodeFailed(let reason): return "cannot encode the PNG: \(reason)"
        case .scaleFailed(let reason): return "cannot scale the image down: \(reason)"
        case .cancelled: return "conversion cancelled: coverd is stopping"
        }
    }
}
