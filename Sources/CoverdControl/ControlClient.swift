#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CoverdBase

/// The client's side of the control channel: connects to the daemon of a
/// cache, sends one request, reads response lines. Blocking, with timeouts
/// (`SO_SNDTIMEO` bounds the connect too), for the command line.
public final class ControlClient: Sendable {
    public let socketPath: ControlSocketPath
    private let socket: UnixSocket
    private let buffer: LineBox

    private init(socketPath: ControlSocketPath, socket: UnixSocket) {
        self.socketPath = socketPath
        self.socket = socket
        buffer = LineBox(LineBuffer(limit: ControlProtocol.maxLineBytes))
    }

    /// Connects to the first of `candidates` where a daemon listens. Nothing
    /// there (no file, or a stale socket nobody answers on) is `.noDaemon`;
    /// anything else (no permission, a timeout) is said as it is, once no
    /// later candidate answers: a runtime directory we may not enter (after
    /// `su`) must not hide a daemon listening in the cache.
    public static func connect(to candidates: [ControlSocketPath], cache: String, timeout: Duration) throws(ControlError) -> ControlClient {
        var tried: [String] = []
        var failure: ControlError?
        for candidate in candidates {
            let socket = try UnixSocket.stream(nonBlocking: false, path: candidate.path)
            try socket.setTimeouts(send: timeout, receive: timeout, path: candidate.path)
            let code: Int32
            do {
                code = try socket.connectTo(candidate)
            } catch {
                // The directory itself is missing: nothing listens there.
                if case .system(let problem) = error, problem.code == ENOENT || problem.code == ENOTDIR {
                    tried.append(candidate.path)
                } else {
                    failure = failure ?? error
                }
                continue
            }
            switch code {
            case 0:
                // Only our own daemon (or root's) is believed: a socket another user planted where we look could fake answers.
                guard let peer = socket.peer(), peer.uid == getuid() || peer.uid == 0 else {
                    failure = failure ?? .refused(path: candidate.path, message: "it is served by another user's process, not by our own coverd")
                    continue
                }
                return ControlClient(socketPath: candidate, socket: socket)
            case ENOENT, ECONNREFUSED, ENOTDIR:
                tried.append(candidate.path)
            case EAGAIN, EINPROGRESS:
                failure = failure ?? .timedOut(path: candidate.path, waiting: "a connection")
            default:
                failure = failure ?? .unreachable(path: candidate.path, error: SystemError("connect", path: candidate.path, code: code))
            }
        }
        throw failure ?? .noDaemon(cache: cache, tried: tried)
    }

    public func send(_ request: ControlRequest) throws(ControlError) {
        let bytes = ControlProtocol.encode(request)
        guard bytes.count - 1 <= ControlProtocol.maxLineBytes else {
            throw .requestTooLong(bytes: bytes.count - 1, limit: ControlProtocol.maxLineBytes)
        }
        var sent = 0
        while sent < bytes.count {
            switch socket.sendBlocking(bytes[sent...]) {
            case .success(let count): sent += count
            case .failure(let error) where error.code == EINTR: continue
            case .failure(let error) where error.code == EAGAIN || error.code == EWOULDBLOCK:
                throw .timedOut(path: socketPath.path, waiting: "room to send the request")
            case .failure(let error):
                // A daemon that refused us (another user) closed at once: its reason may be waiting to be read.
                if error.code == EPIPE || error.code == ECONNRESET, case .error(let message)? = try? next(timeout: .seconds(1)) {
                    throw .refused(path: socketPath.path, message: message)
                }
                throw .unreachable(path: socketPath.path, error: SystemError("send", path: socketPath.path, code: error.code))
            }
        }
    }

    /// The next response; nil when the daemon closed the connection. Waits at
    /// most `timeout` (nil: as long as it takes, as `follow` does).
    public func next(timeout: Duration?) throws(ControlError) -> ControlResponse? {
        try socket.setTimeouts(send: nil, receive: timeout, path: socketPath.path)
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let line: [UInt8]?
            do {
                line = try buffer.next()
            } catch {
                throw .protocolViolation(path: socketPath.path, reason: "a line over \(error.limit) bytes")
            }
            if let line {
                do {
                    return try ControlProtocol.decodeResponse(line)
                } catch {
                    throw .protocolViolation(path: socketPath.path, reason: error.reason)
                }
            }
            let count = chunk.withUnsafeMutableBytes { recv(socket.descriptor, $0.baseAddress, $0.count, 0) }
            if count == 0 { return nil }
            if count < 0 {
                let code = errno
                if code == EINTR { continue }
                if code == EAGAIN || code == EWOULDBLOCK { throw .timedOut(path: socketPath.path, waiting: "an answer") }
                if code == ECONNRESET { return nil }
                throw .unreachable(path: socketPath.path, error: SystemError("recv", path: socketPath.path, code: code))
            }
            buffer.append(chunk[..<count])
        }
    }
}
