import CLinux
import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CoverdBase

/// Group commit for cover files: runs work only after everything written
/// before it is on disk, with one `syncfs` for a whole batch instead of one
/// `fsync` per file.
///
/// Files written while a sync is running wait for the next one; when covers
/// arrive one at a time, each gets its own sync as soon as it is submitted,
/// so batching adds no delay when the daemon is idle. The trade: `syncfs`
/// also flushes other programs' dirty data on the same filesystem. While
/// batches run, a rename may join them for one more sync
/// (`joinRunningFlush`) instead of a directory `fsync` of its own.
///
/// Errors: `syncfs` reports a writeback error once per open file description,
/// for errors since that description last asked. The batcher opens its
/// directory descriptor when it is made, before any cover is written (a later
/// one would not see earlier errors), and keeps it. Writers take a ticket
/// (`beginWrite`) before writing; when a sync fails, every ticket handed out
/// so far fails with it, whether its work is in this batch, already queued
/// for the next, or not yet submitted: its file may have been the one whose
/// writeback failed.
///
/// Only on filesystems where `syncfs` is known to make everything durable as
/// `fsync` does (`groupCommits`, `MetadataCommits`); elsewhere (FUSE, network,
/// overlay and FAT filesystems, ext4 without a journal) each file is fsynced
/// when written and `afterFlush` adds nothing.
public final class FlushBatcher: Sendable {
    private let directory: String
    private let queue = DispatchQueue(label: "coverd.flush")
    /// Where a synced batch's works run, in order, so that the next `syncfs`
    /// starts at once: on a disk slower than the network, the device idled
    /// while the flush queue itself dropped each cover's pages and handed it on.
    private let worksQueue = DispatchQueue(label: "coverd.flush.works")
    private let state = Mutex(State())
    /// Open from `init` to `deinit`; -1 when group commits are off.
    private let descriptor: Int32
    /// True when writers may skip their own fsync and rely on this batcher's `syncfs`.
    public let groupCommits: Bool
    /// How covers are made durable here, and why, for the log: "one syncfs per batch (XFS)".
    public let durability: String
    /// `syncfs`, or a stand-in that fails on demand in tests.
    private let syncFilesystem: @Sendable (Int32) -> Int32

    private struct State {
        /// Tickets are checked when a work is submitted; a queued work fails with its whole batch.
        var works: [@Sendable (SystemError?) -> Void] = []
        /// A sync asked for without a work (`joinRunningFlush`), and who hears if it fails.
        var requested: (@Sendable (SystemError) -> Void)?
        var running = false
        var tickets: UInt64 = 0
        /// Tickets up to this one belong to writes a failed sync may have lost.
        var failedThrough: UInt64 = 0
        var failure: SystemError?
    }

    public convenience init(directory: String) {
        self.init(directory: directory, syncFilesystem: { syncfs($0) })
    }

    init(directory: String, syncFilesystem: @escaping @Sendable (Int32) -> Int32) {
        self.directory = directory
        self.syncFilesystem = syncFilesystem
        let decision = MetadataCommits.decide(directory)
        let fd = decision.groupCommits ? open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1
        descriptor = fd
        groupCommits = fd >= 0
        let method = groupCommits ? "one syncfs per batch" : "an fsync of each cover and directory"
        // Untested: the directory was just made, so failing to open it takes a fault injected into open(2).
        let openFailure = decision.groupCommits && !groupCommits ? ", but \(SystemError("open for syncfs", path: directory))" : ""
        durability = "\(method) (\(decision.filesystem)\(openFailure))"
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }

    /// Call before writing the files a later `afterFlush` waits for.
    public func beginWrite() -> UInt64 {
        state.withLock { state in
            state.tickets += 1
            return state.tickets
        }
    }

    /// Calls `work` (on the batcher's queues, in the order submitted) once everything written under
    /// `ticket` is durable, or with the error that may have lost it.
    public func afterFlush(ticket: UInt64, _ work: @escaping @Sendable (SystemError?) -> Void) {
        guard groupCommits else {
            worksQueue.async { work(nil) }  // every file was fsynced as it was written
            return
        }
        let (start, failure) = state.withLock { state -> (Bool, SystemError?) in
            if ticket <= state.failedThrough, let failure = state.failure { return (false, failure) }
            state.works.append(work)
            defer { state.running = true }
            return (!state.running, nil)
        }
        if let failure {
            worksQueue.async { work(failure) }
        } else if start {
            queue.async { self.runBatches() }
        }
    }

    /// While batches are being synced: asks for one more `syncfs`, started
    /// after this call, for a change already made that needs no work
    /// afterwards (a rename, which that sync commits), and returns true.
    /// Requests made before the next batch starts share its sync, which a
    /// burst of covers needs anyway; `onError` (the latest request's; every
    /// request passes the same) hears if it fails. Returns false, and
    /// asks nothing, when no batch is running: a lone cover's rename is better
    /// served by a directory `fsync` than by a second sync of the whole
    /// filesystem, other programs' dirty data included. A batch stops counting
    /// as running once its sync returned with nothing else asked for, before
    /// its works run: it does not keep the batcher running for the renames
    /// they lead to (another cover's batch still may).
    public func joinRunningFlush(onError: @escaping @Sendable (SystemError) -> Void) -> Bool {
        guard groupCommits else { return false }
        return state.withLock { state in
            // `running` is cleared only under this lock, once nothing is left: the loop will see the request.
            guard state.running else { return false }
            state.requested = onError
            return true
        }
    }

    /// Waits until every work submitted so far has run, and every sync joined so far.
    public func waitUntilIdle() {
        queue.sync {}
        // The loop hands works on before it ends, so once it has ended they are all queued here.
        worksQueue.sync {}
    }

    private typealias Batch = (works: [@Sendable (SystemError?) -> Void], requested: (@Sendable (SystemError) -> Void)?)

    /// What waits for the next sync, taken; nil, and no longer running, when nothing does.
    private func takeBatch() -> Batch? {
        state.withLock { state in
            defer { state.works = []; state.requested = nil }
            guard !state.works.isEmpty || state.requested != nil else {
                state.running = false
                return nil
            }
            return (state.works, state.requested)
        }
    }

    /// Ordering: the next batch is taken before the current one's works are
    /// handed on, so that when nothing else was asked for the batcher is idle
    /// by then, and a lone cover's rename, which follows from its works, gets
    /// its directory fsync rather than a second sync. Works run on
    /// `worksQueue`, batch after batch, while the next sync already runs.
    private func runBatches() {
        var next = takeBatch()
        while let batch = next {
            guard syncFilesystem(descriptor) != 0 else {
                next = takeBatch()
                worksQueue.async { batch.works.forEach { $0(nil) } }
                continue
            }
            let error = SystemError("syncfs", path: directory)
            // Every write begun before this error was seen may be the one it lost.
            let queued = state.withLock { state -> [@Sendable (SystemError?) -> Void] in
                state.failedThrough = state.tickets
                state.failure = error
                defer { state.works = [] }
                return state.works
            }
            batch.requested?(error)
            worksQueue.async { (batch.works + queued).forEach { $0(error) } }
            next = takeBatch()
        }
    }
}
