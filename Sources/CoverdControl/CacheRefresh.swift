#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CoverdBase
import CoverdCache
import CoverdModel
import CoverdSync

/// `coverd refresh` (contract §8): taking the cache's lock is the test of
/// whether a daemon runs. Taken: no daemon can, so the marks go into the
/// index for the next start (`CoverIndex.markForRefresh`), and the lock is
/// let go. Held by a daemon: the request goes through its control socket,
/// and it acts at once.
public struct CacheRefresh: Sendable {
    /// How a refresh went.
    public enum Outcome: Sendable, Equatable {
        /// No daemon ran: `count` covers are marked for its next start.
        case marked(count: Int)
        /// The running daemon is refreshing `count` covers.
        case refreshing(count: Int)
        /// Ids no album in the records (or the index) has; nothing was changed.
        case unknown([AlbumID])
    }

    /// Why a refresh could not be made.
    public enum Failure: Error, Sendable, CustomStringConvertible {
        case lock(CacheLockError)
        case index(IndexError)
        /// A daemon holds the cache, but its socket could not be used.
        case daemon(pid: Int32?, ControlError)

        public var description: String {
            switch self {
            case .lock(let error): return "\(error)"
            case .index(let error): return "\(error)"
            case .daemon(let pid, let error):
                let holder = pid.map { "a coverd daemon (pid \($0))" } ?? "a coverd daemon"
                return "\(holder) holds the cache, but \(error)"
            }
        }
    }

    public let cacheDirectory: String
    public let environment: [String: String]
    /// How long to wait for the connection, and then for the daemon's answer.
    public var connectTimeout: Duration = .seconds(2)
    public var answerTimeout: Duration = .seconds(30)
    /// How long a daemon that holds the lock but does not listen yet (it is starting) is waited for.
    public var startupWait: Duration = .seconds(5)

    public init(cacheDirectory: String, environment: [String: String]) {
        self.cacheDirectory = cacheDirectory
        self.environment = environment
    }

    public func run(_ request: RefreshRequest) throws(Failure) -> Outcome {
        var info = stat()
        guard stat(cacheDirectory, &info) == 0 else {
            // No cache, so no daemon and no index: nothing is known yet.
            return request.ids.isEmpty ? .marked(count: 0) : .unknown(request.ids)
        }
        let lock: CacheLock
        do {
            lock = try CacheLock(cacheDirectory: cacheDirectory)
        } catch {
            guard case .held(_, let pid) = error else { throw .lock(error) }
            return try throughDaemon(request, holder: pid)
        }
        return try withExtendedLifetime(lock) { () throws(Failure) -> Outcome in
            // A filesystem without locks proves nothing: a daemon that answers is asked first.
            if !lock.isHeld, let outcome = try? throughDaemon(request, holder: nil) { return outcome }
            return try offline(request)
        }
    }

    /// Marks in the index, under the lock.
    private func offline(_ request: RefreshRequest) throws(Failure) -> Outcome {
        guard access(join(cacheDirectory, CoverIndex.fileName), F_OK) == 0 else {
            return request.ids.isEmpty ? .marked(count: 0) : .unknown(request.ids)
        }
        do {
            let index = try CoverIndex(cacheDirectory: cacheDirectory)
            let unknown = try index.markForRefresh(request.ids, all: request.all, mark: request.mark)
            guard unknown.isEmpty else { return .unknown(unknown) }
            let count = request.all ? try index.rows().count { $0.removedAt == nil } : Set(request.ids).count
            return .marked(count: count)
        } catch {
            throw .index(error)
        }
    }

    /// A daemon that has just taken the cache's lock listens a moment later:
    /// while it lives, "nothing listens" is asked again for `startupWait`.
    private func connect(to candidates: [ControlSocketPath], holder: Int32?) throws(ControlError) -> ControlClient {
        let deadline = ContinuousClock.now + startupWait
        while true {
            do throws(ControlError) {
                return try ControlClient.connect(to: candidates, cache: cacheDirectory, timeout: connectTimeout)
            } catch {
                guard case .noDaemon = error, let holder, kill(holder, 0) == 0 || errno == EPERM, ContinuousClock.now < deadline else {
                    throw error
                }
                usleep(50_000)
            }
        }
    }

    private func throughDaemon(_ request: RefreshRequest, holder: Int32?) throws(Failure) -> Outcome {
        do throws(ControlError) {
            let candidates = try ControlSocketPath.clientCandidates(cacheDirectory: cacheDirectory, environment: environment)
            let client = try connect(to: candidates, holder: holder)
            try client.send(.refresh(request))
            switch try client.next(timeout: answerTimeout) {
            case .refreshed(let count)?: return .refreshing(count: count)
            case .unknown(let ids)?: return .unknown(ids)
            case .error(let message)?: throw ControlError.refused(path: client.socketPath.path, message: message)
            case nil, .stopping?: throw ControlError.protocolViolation(path: client.socketPath.path, reason: "it closed the connection without an answer")
            case .progress?: throw ControlError.protocolViolation(path: client.socketPath.path, reason: "progress instead of an answer")
            }
        } catch {
            throw .daemon(pid: holder, error)
        }
    }
}
