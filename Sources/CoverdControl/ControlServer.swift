#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CLinux
import Dispatch
import Synchronization
import CoverdBase
import CoverdSync

/// The daemon's side of the control channel (contract §8): a Unix stream
/// socket at `ControlSocketPath`, mode 0600 in a 0700 directory, serving
/// `ControlProtocol` to the daemon's own user only (each connection's
/// SO_PEERCRED uid must be the daemon's; root is no exception, as it can
/// always act as the user). Everything runs on Dispatch sources on one
/// queue of its own: a refresh is handed to the coordinator, whose answer
/// comes back later, so nothing here waits for it or blocks it.
///
/// Bounds: a request is one line of at most `maxRequestBytes`,
/// whole within `requestTimeout`; at most `maxConnections` at once (more are
/// told so and closed); a follower more than `maxPendingOutput` behind is dropped.
///
/// The socket is bound under a temporary name, made 0600, then renamed into
/// place: it never appears with looser permissions, and a stale socket left
/// by a killed daemon is replaced in one step. That the stale one is dead
/// is proven by the cache's lock (`ownsCache`); without the lock's word
/// (a filesystem without locks), a socket someone answers on is left alone.
public final class ControlServer: Sendable {
    /// How much the server takes on.
    public struct Limits: Sendable {
        public var maxConnections = 16
        /// The longest request line; less than the protocol's only in tests.
        public var maxRequestBytes = ControlProtocol.maxLineBytes
        public var requestTimeout: Duration = .seconds(5)
        public var maxPendingOutput = 64 * 1024
        public var followInterval: Duration = .seconds(1)

        public init() {}
    }

    /// Where the server listens if it can, and where otherwise (the cache's own `coverd.sock`).
    public let socketPath: ControlSocketPath
    public let fallback: ControlSocketPath?
    private let refresher: any CoverRefreshing
    private let bus: EventBus
    private let ownsCache: Bool
    private let allowedUID: uid_t
    private let limits: Limits
    private let queue = DispatchQueue(label: "coverd.control")
    private let followers: ProgressFollowers
    private let state = Mutex(State())

    private struct State {
        var listener: UnixSocket?
        var acceptor: DescriptorSource?
        var directory: DirectoryHandle?
        /// Where it listens: `socketPath`, or `fallback` when that could not be used.
        var listening: ControlSocketPath?
        /// The bound socket file's device and inode: removed at stop only if it is still this one.
        var bound: (device: UInt, inode: UInt)?
        var connections: [ObjectIdentifier: ControlConnection] = [:]
        var observations: [ObservationToken] = []
        var stopped = false
        /// The acceptor is suspended (`pauseAccepting`); a cancelled one is kept until resumed.
        var paused = false
        var cancelledAcceptor: DescriptorSource?
    }

    public init(
        socketPath: ControlSocketPath, fallback: ControlSocketPath? = nil, refresher: any CoverRefreshing, bus: EventBus, ownsCache: Bool,
        limits: Limits = Limits(), allowedUID: UInt32 = geteuid()
    ) {
        self.socketPath = socketPath
        self.fallback = fallback
        self.refresher = refresher
        self.bus = bus
        self.ownsCache = ownsCache
        self.allowedUID = allowedUID
        self.limits = limits
        followers = ProgressFollowers(queue: queue, interval: limits.followInterval)
    }

    /// Binds and listens, and starts following the daemon's progress. Call
    /// before the first scan is posted, so followers see every change. A
    /// runtime directory that cannot be used (read-only under an old unit,
    /// another user's after `su`) leaves the fallback, said as a notice.
    public func start() throws(ControlError) {
        let bound: Bound
        do {
            bound = try bindSocket(at: socketPath)
        } catch {
            guard let fallback, fallback != socketPath else { throw error }
            bus.post(OperationFailed(
                operation: "listen on \(socketPath.path)", error: "\(error); trying \(fallback.path) instead", severity: .notice))
            bound = try bindSocket(at: fallback)
        }
        let acceptor = DescriptorSource(.read, on: bound.socket, queue: queue) { [weak self] in self?.acceptPending() }
        let observations = [
            bus.observe(SyncProgress.self, on: queue) { [weak self] in self?.followers.progress($0.summary) },
            bus.observe(LifecycleChanged.self, on: queue) { [weak self] in self?.followers.lifecycle($0.phase) },
        ]
        state.withLock { state in
            state.listener = bound.socket
            state.acceptor = acceptor
            state.directory = bound.directory
            state.listening = bound.path
            state.bound = bound.file
            state.observations = observations
        }
        acceptor.resume()
        bus.post(ControlListening(path: bound.path.path, isCacheFallback: bound.path.isCacheFallback))
    }

    /// Where the server listens once started; nil before, or when it could not.
    public var listeningPath: ControlSocketPath? { state.withLock { $0.listening } }

    /// A listening socket in place at its path.
    private struct Bound {
        var path: ControlSocketPath
        var socket: UnixSocket
        var directory: DirectoryHandle
        var file: (device: UInt, inode: UInt)?
    }

    private func bindSocket(at path: ControlSocketPath) throws(ControlError) -> Bound {
        let directory = try path.isCacheFallback ? DirectoryHandle(path: path.directory) : privateDirectory(path.directory)
        try clearStale(path, in: directory)
        let socket = try UnixSocket.stream(nonBlocking: true, path: path.path)
        let temporary = ".\(path.name).\(getpid()).new"
        _ = unlinkat(directory.descriptor, temporary, 0)  // A leftover of an earlier process with this pid, if any.
        let failure = try UnixSocket.withAddress(directory: path.directory, name: temporary) { bind(socket.descriptor, $0, $1) }
        guard failure == 0 else { throw .system(SystemError("bind", path: join(path.directory, temporary), code: failure)) }
        var placed = false
        defer { if !placed { _ = unlinkat(directory.descriptor, temporary, 0) } }
        guard fchmodat(directory.descriptor, temporary, 0o600, 0) == 0 else {
            throw .system(SystemError("chmod", path: join(path.directory, temporary)))
        }
        guard listen(socket.descriptor, Int32(limits.maxConnections)) == 0 else { throw .system(SystemError("listen", path: path.path)) }
        guard renameat(directory.descriptor, temporary, directory.descriptor, path.name) == 0 else {
            throw .system(SystemError("rename", path: path.path))
        }
        placed = true
        let info = try directory.entry(path.name)
        return Bound(path: path, socket: socket, directory: directory, file: info.map { (UInt($0.st_dev), UInt($0.st_ino)) })
    }

    /// Stops listening, tells followers the daemon stops, closes every
    /// connection and removes the socket. Not to be called on the server's queue.
    public func stop() {
        queue.sync {
            let (acceptor, observations, connections, directory, bound, path) = state.withLock { state in
                state.stopped = true
                defer {
                    if state.paused { state.cancelledAcceptor = state.acceptor }
                    state.acceptor = nil
                    state.observations = []
                    state.connections = [:]
                    state.listener = nil
                }
                return (state.acceptor, state.observations, Array(state.connections.values), state.directory, state.bound, state.listening)
            }
            observations.forEach { $0.cancel() }
            acceptor?.cancel()
            followers.stopAll()
            for connection in connections { connection.close() }
            if let directory, let bound, let path, let info = try? directory.entry(path.name),
                UInt(info.st_dev) == bound.device, UInt(info.st_ino) == bound.inode {
                _ = unlinkat(directory.descriptor, path.name, 0)  // Gone already is as good.
            }
        }
    }

    /// Waits until everything delivered to the server so far is handled; for tests.
    func drain() {
        queue.sync {}
    }

    var connectionCount: Int { state.withLock { $0.connections.count } }

    // MARK: Setting up

    /// `$XDG_RUNTIME_DIR/coverd`, made 0700 if missing; it must be a directory of ours, and private.
    private func privateDirectory(_ path: String) throws(ControlError) -> DirectoryHandle {
        if mkdir(path, 0o700) != 0 && errno != EEXIST { throw .system(SystemError("mkdir", path: path)) }
        let directory = try DirectoryHandle(path: path)
        var info = stat()
        guard fstat(directory.descriptor, &info) == 0 else { throw .system(SystemError("stat", path: path)) }
        guard info.st_uid == geteuid() else { throw .directoryNotPrivate(path: path, reason: "it belongs to uid \(info.st_uid), not \(geteuid())") }
        if info.st_mode & 0o077 != 0 {
            guard chmod(path, 0o700) == 0 else { throw .system(SystemError("chmod 0700", path: path)) }
        }
        return directory
    }

    /// A stale socket from a killed daemon is replaced by the rename; anything else there stops us.
    private func clearStale(_ path: ControlSocketPath, in directory: DirectoryHandle) throws(ControlError) {
        guard let info = try directory.entry(path.name) else { return }
        guard info.st_mode & S_IFMT == S_IFSOCK else { throw .notASocket(path: path.path) }
        guard !ownsCache else { return }
        if (try? ControlClient.connect(to: [path], cache: path.directory, timeout: .milliseconds(500))) != nil {
            throw .alreadyListening(path: path.path)
        }
    }

    // MARK: Connections

    private func acceptPending() {
        guard let listener = state.withLock({ $0.stopped ? nil : $0.listener }) else { return }
        while true {
            let fd = accept4(listener.descriptor, nil, nil, Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue))
            guard fd >= 0 else {
                let code = errno
                if code == EINTR || code == ECONNABORTED { continue }
                if code == EMFILE || code == ENFILE { pauseAccepting(code) }
                return
            }
            admit(UnixSocket(adopting: fd))
        }
    }

    private func admit(_ socket: UnixSocket) {
        let peer = socket.peer()
        guard let peer, peer.uid == allowedUID else {
            let message = "refused: only uid \(allowedUID), the daemon's user, may use this socket"
            _ = socket.sendSome(ControlProtocol.encode(.error(message))[...])  // Best effort: it is closed either way.
            bus.post(ControlPeerRefused(uid: peer?.uid, pid: peer?.pid, allowedUID: allowedUID))
            return
        }
        guard state.withLock({ $0.connections.count }) < limits.maxConnections else {
            _ = socket.sendSome(ControlProtocol.encode(.error("busy: \(limits.maxConnections) connections already open"))[...])
            return
        }
        let connection = ControlConnection(
            socket: socket, queue: queue, maxRequestBytes: limits.maxRequestBytes, maxPendingOutput: limits.maxPendingOutput,
            onRequest: { [weak self] connection, request in self?.handle(request, from: connection) },
            onClose: { [weak self] connection in self?.forget(connection) })
        state.withLock { $0.connections[ObjectIdentifier(connection)] = connection }
        connection.start(requestTimeout: limits.requestTimeout)
    }

    private func handle(_ request: ControlRequest, from connection: ControlConnection) {
        switch request {
        case .follow:
            followers.add(connection)
        case .refresh(let refresh):
            let queue = self.queue, bus = self.bus
            // A client gone meanwhile was closed: the answer then goes nowhere.
            refresher.refresh(refresh) { [connection] result in
                queue.async {
                    bus.post(ControlRefreshAnswered(request: refresh, result: result))
                    switch result {
                    case .refreshed(let count): connection.finish(with: .refreshed(count: count))
                    case .unknown(let ids): connection.finish(with: .unknown(ids))
                    }
                }
            }
        }
    }

    private func forget(_ connection: ControlConnection) {
        followers.remove(connection)
        _ = state.withLock { $0.connections.removeValue(forKey: ObjectIdentifier(connection)) }
    }

    /// Out of descriptors: the listener stays readable, so accepting pauses for a second instead of spinning.
    private func pauseAccepting(_ code: Int32) {
        let acceptor = state.withLock { state -> DescriptorSource? in
            guard !state.paused, let acceptor = state.acceptor else { return nil }
            state.paused = true
            return acceptor
        }
        guard let acceptor else { return }
        acceptor.suspend()
        bus.post(OperationFailed(
            operation: "accept a control connection", error: "\(SystemError.describe(code)); pausing for a second", severity: .warning))
        queue.asyncAfter(deadline: .now() + 1) { [weak self] in self?.resumeAccepting() }
    }

    /// A suspended source must be resumed before it goes, even when it was cancelled meanwhile.
    private func resumeAccepting() {
        let acceptor = state.withLock { state -> DescriptorSource? in
            guard state.paused else { return nil }
            state.paused = false
            return state.acceptor ?? state.cancelledAcceptor
        }
        acceptor?.resume()
        state.withLock { $0.cancelledAcceptor = nil }
    }
}
