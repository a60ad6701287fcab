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
///
/// Errors: `syncfs` reports a writeback error once per open file description,
/// for errors since that description last asked. The batcher keeps one
/// directory descriptor for its whole life (a fresh one would not see errors
/// from before it was opened), and when a sync fails, every work already
/// waiting fails with it: their files were written before the error was seen,
/// so the failed writeback may have been theirs.
///
/// Only on filesystems where `syncfs` is known to flush file data as `fsync`
/// does (`groupCommits`); elsewhere (FUSE, network and FAT filesystems) each
/// file is fsynced when written and `afterFlush` adds nothing.
public final class FlushBatcher: Sendable {
    private let directory: String
    private let queue = DispatchQueue(label: "coverd.flush")
    private let pending = Mutex<(works: [@Sendable (SystemError?) -> Void], running: Bool)>(([], false))
    /// Used only on `queue`; closed in `deinit`.
    private let descriptor = Mutex<Int32>(-1)
    /// True when writers may skip their own fsync and rely on this batcher's `syncfs`.
    public let groupCommits: Bool

    public init(directory: String) {
        self.directory = directory
        groupCommits = FlushBatcher.syncfsFlushesData(directory)
    }

    deinit {
        let fd = descriptor.withLock { $0 }
        if fd >= 0 { close(fd) }
    }

    /// ext4, XFS, btrfs, F2FS and tmpfs: `syncfs` writes and waits on every
    /// dirty inode and flushes the device cache, as `fsync` would.
    static func syncfsFlushesData(_ directory: String) -> Bool {
        let trusted: Set<Int64> = [0xEF53, 0x5846_5342, 0x9123_683E, 0xF2F5_2010, 0x0102_1994]
        return trusted.contains(coverd_filesystem_type(directory))
    }

    /// Calls `work` (on the batcher's queue) once everything written before
    /// this call is durable, or with the error that prevented it.
    public func afterFlush(_ work: @escaping @Sendable (SystemError?) -> Void) {
        guard groupCommits else {
            queue.async { work(nil) }  // every file was fsynced as it was written
            return
        }
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
            guard let error = sync() else {
                batch.forEach { $0(nil) }
                continue
            }
            // Works queued meanwhile wrote their files before this error was seen: they fail too.
            let written = pending.withLock { state -> [@Sendable (SystemError?) -> Void] in
                defer { state.works = [] }
                return state.works
            }
            (batch + written).forEach { $0(error) }
        }
    }

    private func sync() -> SystemError? {
        descriptor.withLock { fd -> SystemError? in
            if fd < 0 {
                fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
                guard fd >= 0 else { return SystemError("open", path: directory) }
            }
            return syncfs(fd) == 0 ? nil : SystemError("syncfs", path: directory)
        }
    }
}
