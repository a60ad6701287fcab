import CoverdBase
import CoverdModel

/// An album that was rejected, with where it was in its file.
public struct RecordRejection: Sendable, Equatable, CustomStringConvertible {
    public var record: String
    public var position: String
    public var error: AlbumFieldError

    public var description: String { "\(record): \(position): \(error)" }
}

/// Why a whole record file could not be used. Albums it held before stay
/// until it is fixed or deleted.
public enum RecordFileError: Error, Sendable, Equatable, CustomStringConvertible {
    case cannotOpen(path: String, errno: Int32)
    case notRegularFile(path: String, kind: String)
    case tooLarge(path: String, size: Int, limit: Int)
    case readFailed(path: String, errno: Int32)
    case invalidJSON(path: String, JSONSyntaxError)
    case unexpectedShape(path: String, reason: String)
    case invalidArchive(path: String, reason: String)
    /// The file name is not valid UTF-8, so coverd cannot name it reliably.
    case unusableName(path: String)

    /// True when the file was read but its contents are wrong (as opposed to unreadable).
    public var isAboutContent: Bool {
        switch self {
        case .invalidJSON, .unexpectedShape, .invalidArchive: return true
        case .cannotOpen, .notRegularFile, .tooLarge, .readFailed, .unusableName: return false
        }
    }

    public var path: String {
        switch self {
        case .cannotOpen(let path, _), .notRegularFile(let path, _), .tooLarge(let path, _, _),
            .readFailed(let path, _), .invalidJSON(let path, _), .unexpectedShape(let path, _),
            .invalidArchive(let path, _), .unusableName(let path):
            return path
        }
    }

    /// The reason alone, without the path (the log line carries the path as a field).
    public var reason: String {
        switch self {
        case .cannotOpen(_, let code): return "cannot open: \(SystemError.describe(code))"
        case .notRegularFile(_, let kind): return "not a regular file (\(kind)); ignored"
        case .tooLarge(_, let size, let limit): return "file is too large (\(size) bytes, limit \(limit))"
        case .readFailed(_, let code): return "cannot read: \(SystemError.describe(code))"
        case .invalidJSON(_, let error): return "not valid JSON: \(error)"
        case .unexpectedShape(_, let reason): return reason
        case .invalidArchive(_, let reason): return "not a valid album archive: \(reason)"
        case .unusableName: return "the file name is not valid UTF-8; rename the file"
        }
    }

    public var description: String { "\(path): \(reason)" }
}
