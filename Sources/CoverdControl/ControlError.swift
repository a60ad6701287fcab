import CoverdBase

/// Why the control channel could not be set up or used, saying where
/// (the socket's path) and why (the errno, or what the other side said).
public enum ControlError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A system call on the socket or its directory failed.
    case system(SystemError)
    /// The socket's directory is not a private directory of ours.
    case directoryNotPrivate(path: String, reason: String)
    /// Something that is not a socket sits where the socket goes; it is left alone.
    case notASocket(path: String)
    /// Another process already listens at the path (only asked where the cache lock proves nothing).
    case alreadyListening(path: String)
    /// The socket's path cannot be worked out (the cache directory cannot be resolved).
    case noPath(reason: String)
    /// No daemon listens for this cache: nothing at any of `tried`.
    case noDaemon(cache: String, tried: [String])
    /// A daemon listens but could not be reached or used.
    case unreachable(path: String, error: SystemError)
    /// The other side did not answer in time.
    case timedOut(path: String, waiting: String)
    /// The other side sent something the protocol does not allow.
    case protocolViolation(path: String, reason: String)
    /// The daemon answered with an error (a refused peer, a bad request).
    case refused(path: String, message: String)
    /// A request longer than the protocol allows.
    case requestTooLong(bytes: Int, limit: Int)

    public var description: String {
        switch self {
        case .system(let error):
            return "\(error)"
        case .directoryNotPrivate(let path, let reason):
            return "\(path) is not a private directory: \(reason)"
        case .notASocket(let path):
            return "\(path) exists and is not a socket; it was left alone"
        case .alreadyListening(let path):
            return "another process already listens at \(path)"
        case .noPath(let reason):
            return "cannot work out the control socket's path: \(reason)"
        case .noDaemon(let cache, let tried):
            return "no coverd daemon is running with the cache \(cache) (nothing listens at \(tried.joined(separator: " or ")))"
        case .unreachable(let path, let error):
            return "cannot reach the daemon at \(path): \(SystemError.describe(error.code)) (\(error.operation))"
        case .timedOut(let path, let waiting):
            return "the daemon at \(path) did not answer in time (waiting for \(waiting))"
        case .protocolViolation(let path, let reason):
            return "the daemon at \(path) sent something unexpected: \(reason)"
        case .refused(let path, let message):
            return "the daemon at \(path) refused: \(message)"
        case .requestTooLong(let bytes, let limit):
            return "the request is \(bytes) bytes, more than the \(limit) one request may hold: name fewer ids, or use --all"
        }
    }
}
