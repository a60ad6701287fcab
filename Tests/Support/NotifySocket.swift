import Foundation
import Synchronization

/// A real `NOTIFY_SOCKET`: a datagram socket bound to a path or an abstract
/// name (`@…`), collecting every message the daemon sends, as systemd would.
public final class NotifySocket: Sendable {
    /// One datagram: its assignments in order, and when it arrived.
    public struct Message: Sendable {
        public var assignments: [(key: String, value: String)]
        public var received: ContinuousClock.Instant

        public subscript(key: String) -> String? { assignments.last { $0.key == key }?.value }
    }

    /// The value for `NOTIFY_SOCKET`.
    public let address: String
    private let descriptor: Int32
    private let messages: Received
    private let path: String?

    /// What the receiving thread collected; the thread holds this, not the socket object.
    private final class Received: Sendable {
        let list = Mutex<[Message]>([])
    }

    public init(directory: String, abstract: Bool = false) throws {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        let name = abstract ? "@coverd-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))" : directory + "/notify.sock"
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(name.utf8)
        if abstract { bytes[0] = 0 }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.enumerated() where index < raw.count { raw[index] = byte }
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0 else {
            close(fd)
            throw POSIXError(.EADDRINUSE)
        }
        descriptor = fd
        self.address = name
        path = abstract ? nil : name
        let received = Received()
        messages = received
        let thread = Thread { NotifySocket.receive(fd, into: received) }
        thread.start()
    }

    deinit {
        shutdown(descriptor, Int32(SHUT_RDWR))
        close(descriptor)
        if let path { unlink(path) }
    }

    /// Runs on its own thread until the socket is shut down in `deinit`.
    private static func receive(_ descriptor: Int32, into received: Received) {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return }
            let text = String(decoding: buffer[..<count], as: UTF8.self)
            let assignments = text.split(separator: "\n").compactMap { line -> (key: String, value: String)? in
                guard let equals = line.firstIndex(of: "=") else { return nil }
                return (String(line[..<equals]), String(line[equals...].dropFirst()))
            }
            received.list.withLock { $0.append(Message(assignments: assignments, received: .now)) }
        }
    }

    public var all: [Message] { messages.list.withLock { $0 } }

    /// Every value sent for `key`, in order.
    public func values(_ key: String) -> [String] { all.compactMap { $0[key] } }
}
