#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A failed system call, with the errno it set: "rename covers/x.png: No space left on device (errno 28)".
public struct SystemError: Error, Sendable, Equatable, CustomStringConvertible {
    public var operation: String
    public var path: String
    public var code: Int32

    /// `errno` is read before `operation` and `path` are built: building a
    /// message may make calls that change it.
    public init(_ operation: @autoclosure () -> String, path: @autoclosure () -> String, code: Int32 = errno) {
        self.code = code
        self.operation = operation()
        self.path = path()
    }

    public var description: String { "\(operation) \(path): \(SystemError.describe(code))" }

    /// No room left: the disk (ENOSPC) or the user's quota (EDQUOT).
    public var isOutOfSpace: Bool { code == ENOSPC || code == EDQUOT }

    /// `strerror` text followed by the errno number, so both humans and scripts can read it.
    public static func describe(_ code: Int32) -> String {
        guard let text = strerror(code) else { return "errno \(code)" }
        return "\(String(cString: text)) (errno \(code))"
    }
}
