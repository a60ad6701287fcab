@testable import CoverdControl
import CoverdBase
import CoverdModel
import CoverdSync
import CoverdTestSupport
import Dispatch
import Foundation
import Synchronization

/// A coordinator that knows a fixed set of albums and answers refreshes from another queue.
final class FakeRefresher: CoverRefreshing {
    let known: Set<AlbumID>
    private let received = Mutex<[RefreshRequest]>([])

    init(known: [String]) {
        self.known = Set(known.map { AlbumID(trusted: $0) })
    }

    var requests: [RefreshRequest] { received.withLock { $0 } }

    func refresh(_ request: RefreshRequest, reply: @escaping @Sendable (RefreshResult) -> Void) {
        received.withLock { $0.append(request) }
        let unknown = request.ids.filter { !known.contains($0) }
        let count = request.all ? known.count : Set(request.ids).count
        DispatchQueue.global().async { reply(unknown.isEmpty ? .refreshed(count: count) : .unknown(unknown)) }
    }
}

/// Collects the messages of one type posted on a bus.
final class Posted<Message: BusMessage>: Sendable {
    private let messages = Mutex<[Message]>([])
    private let token: Mutex<ObservationToken?> = Mutex(nil)

    init(_ type: Message.Type, on bus: EventBus) {
        let observation = bus.observe(type, on: DispatchQueue(label: "posted")) { [weak self] message in
            self?.messages.withLock { $0.append(message) }
        }
        token.withLock { $0 = observation }
    }

    var all: [Message] { messages.withLock { $0 } }
}

/// A server on a socket in a fresh directory, with a fake coordinator.
struct ServerFixture {
    let directory = TestDirectory("coverd-control")
    let bus = EventBus()
    let refresher: FakeRefresher
    let path: ControlSocketPath
    let server: ControlServer

    init(known: [String] = ["one", "two"], limits: ControlServer.Limits = ControlServer.Limits(), start: Bool = true) throws {
        refresher = FakeRefresher(known: known)
        path = ControlSocketPath(directory: directory.sub("run"), name: "test.sock", isCacheFallback: true)
        server = ControlServer(socketPath: path, refresher: refresher, bus: bus, ownsCache: true, limits: limits)
        if start { try server.start() }
    }

    func client() throws -> ControlClient {
        try ControlClient.connect(to: [path], cache: directory.path, timeout: .seconds(2))
    }
}

/// A client that sends raw bytes, as a careless or hostile one would, and reads whatever comes back until the server closes.
struct RawClient {
    let socket: UnixSocket

    init(_ path: ControlSocketPath) throws {
        socket = try UnixSocket.stream(nonBlocking: false, path: path.path)
        try socket.setTimeouts(send: .seconds(5), receive: .seconds(5), path: path.path)
        let code = try socket.connectTo(path)
        guard code == 0 else { throw ControlError.system(SystemError("connect", path: path.path, code: code)) }
    }

    func send(_ bytes: [UInt8]) {
        var sent = 0
        while sent < bytes.count {
            guard case .success(let count) = socket.sendBlocking(bytes[sent...]), count > 0 else { return }
            sent += count
        }
    }

    /// Everything until the server closes the connection (or 5 s pass), as text.
    func readToEnd() -> String {
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(socket.descriptor, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            out += chunk[..<count]
        }
        return String(decoding: out, as: UTF8.self)
    }
}
