import CLinux
import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Group commit for cover files: runs work only after everything written
/// before it is on disk, with one `syncfs` for a whole batch instead of one
/// `fsync` per file.
///
/// Files written while a sync is running wait for the next one; when covers
/// arrive one at a time, each gets its own sync as soon as it is submitted,
/// so batching adds no delay when the daemon is idle. The trade: `syncfs`
/// also flushes other programs' dirty data on the same filesystem.
public final class FlushBatcher: Sendable {
    private let directory: String
    private let queue = DispatchQueue(label: "coverd.flush")
    private let pending = Mutex<(works: [@Sendable (SystemError?) -> Void], running: Bool)>(([], false))

    public init(directory: String) {
        self.directory = directory
    }

    /// Calls `work` (on the batcher's queue) once everything written before
    /// this call is durable, or with the error that prevented it.
    public func afterFlush(_ work: @escaping @Sendable (SystemError?) -> Void) {
        let start = pending.withLock { state -> Bool in
            state.works.append(work)
            defer { state.running = true }
            return !state.running
        }
        if start { queue.async { self.runBatches() } }
    }

    /// Waits until every work submitted so far has run.
    public func waitUntilIdle() {
        queue.sync {}
    }

    private func runBatches() {
        while true {
            let batch = pending.withLock { state -> [@Sendable (SystemError?) -> Void] in
                defer { state.works = [] }
                if state.works.isEmpty { state.running = false }
                return state.works
            }
            guard !batch.isEmpty else { return }
            let error = sync()
            batch.forEach { $0(error) }
        }
    }

    private func sync() -> SystemError? {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return SystemError("open", path: directory) }
        defer { close(fd) }
        return syncfs(fd) == 0 ? nil : SystemError("syncfs", path: directory)
    }
}
