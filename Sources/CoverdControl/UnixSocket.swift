#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CLinux
import CoverdBase

/// One Unix stream socket's descriptor, closed in `deinit`. Dispatch sources
/// reading or writing it hold this object in their cancel handlers, so the
/// descriptor outlives every source that watches it.
final class UnixSocket: Sendable {
    let descriptor: Int32

    init(adopting descriptor: Int32) {
        self.descriptor = descriptor
    }

    deinit {
        close(descriptor)
    }

    /// A new stream socket, close-on-exec; non-blocking for the daemon, blocking (with timeouts) for a client.
    static func stream(nonBlocking: Bool, path: String) throws(ControlError) -> UnixSocket {
        var type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        if nonBlocking { type |= Int32(SOCK_NONBLOCK.rawValue) }
        let fd = socket(AF_UNIX, type, 0)
        guard fd >= 0 else { throw .system(SystemError("socket", path: path)) }
        return UnixSocket(adopting: fd)
    }

    /// The peer's uid and pid (SO_PEERCRED: as they were when it connected); nil when they cannot be read.
    func peer() -> (uid: uid_t, pid: pid_t)? {
        var credentials = coverd_peer_credentials()
        guard coverd_peer_credentials(descriptor, &credentials) == 0 else { return nil }
        return (credentials.uid, credentials.pid)
    }

    /// Sends what it can without blocking or raising SIGPIPE: the count sent, or the errno (EAGAIN when full).
    func sendSome(_ bytes: ArraySlice<UInt8>) -> Result<Int, SystemError> {
        let count = bytes.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT)) }
        guard count >= 0 else { return .failure(SystemError("send", path: "")) }
        return .success(count)
    }

    /// Sends what it can, waiting at most the send timeout, without raising SIGPIPE.
    func sendBlocking(_ bytes: ArraySlice<UInt8>) -> Result<Int, SystemError> {
        let count = bytes.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard count >= 0 else { return .failure(SystemError("send", path: "")) }
        return .success(count)
    }

    /// Connects to `path` (waiting at most the send timeout); 0, or the errno.
    func connectTo(_ path: ControlSocketPath) throws(ControlError) -> Int32 {
        try UnixSocket.withAddress(directory: path.directory, name: path.name) { systemConnect(descriptor, $0, $1) }
    }

    /// Sets how long a blocking send or receive (and a client's connect) may wait; nil waits forever.
    func setTimeouts(send sendTimeout: Duration?, receive: Duration?, path: String) throws(ControlError) {
        for (option, duration) in [(SO_SNDTIMEO, sendTimeout), (SO_RCVTIMEO, receive)] {
            var value = timeval()
            if let duration {
                let (seconds, attoseconds) = duration.components
                value.tv_sec = Int(seconds)
                value.tv_usec = Int(attoseconds / 1_000_000_000_000)
                if value.tv_sec == 0 && value.tv_usec == 0 { value.tv_usec = 1 }  // zero would mean forever
            }
            guard setsockopt(descriptor, SOL_SOCKET, option, &value, socklen_t(MemoryLayout<timeval>.size)) == 0 else {
                throw .system(SystemError("setsockopt", path: path))
            }
        }
    }

    /// Calls `body` (a bind or a connect) with an address for `name` in `directory`, and returns 0 or the errno it set:
    /// the address is its full path when
    /// that fits `sun_path` (108 bytes with the NUL), else `/proc/self/fd/<n>/<name>`
    /// through a descriptor of the directory, which is as good for bind and connect.
    static func withAddress(
        directory: String, name: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Int32
    ) throws(ControlError) -> Int32 {
        let full = join(directory, name)
        var address = sockaddr_un()
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        var handle: DirectoryHandle?
        var text = full
        if full.utf8.count >= capacity {
            let opened = try DirectoryHandle(path: directory)
            handle = opened
            text = "/proc/self/fd/\(opened.descriptor)/\(name)"
            guard text.utf8.count < capacity else { throw .system(SystemError("bind", path: full, code: ENAMETOOLONG)) }
        }
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: Array(text.utf8))
        }
        // errno is read at once: closing the directory's descriptor afterwards must not be what it says.
        let code = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0 ? 0 : errno }
        }
        withExtendedLifetime(handle) {}
        return code
    }
}

/// `connect(2)`, out of reach of the members named `connect`.
private func systemConnect(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 {
    connect(fd, address, length)
}
