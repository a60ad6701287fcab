import Dispatch
import Synchronization

/// The look at the disk that the first scan puts off: the stamps (size and
/// modification time) of the covers it took as cached on the index's word,
/// looked up after READY, a batch at a time, and handed to the coordinator
/// for `SyncPlanner.checkCached`.
///
/// Why after READY: after a cache drop the kernel builds an inode and a
/// dentry for every cover looked up; for 100,000 covers that took 1.3–1.5 s,
/// most of a cold start, in which the daemon had nothing else to do with
/// those files. What this costs: a cover deleted or damaged while the daemon
/// was stopped counts as cached in READY's `STATUS=` line, and is fetched
/// again once its batch is checked, a second or two later than before.
///
/// Threading: lookups run on `queue`, batch after batch, and each batch's
/// decision is queued on `target` (the coordinator's queue) in order, with
/// the summary after the last. `cancel` stops it between batches; no
/// decision and no summary runs after it returns on `target`.
final class CachedCoverAudit: Sendable {
    private let store: CoverStore
    private let queue: DispatchQueue
    private let progress = Mutex(Progress())
    /// Covers looked up per batch: few enough that a decision holds the
    /// coordinator's queue for a millisecond or so, many enough to cost one hop each.
    static let batchSize = 1024

    private struct Progress {
        var cancelled = false
        var checked = 0
        var lost = 0
    }

    /// - Parameter queue: where the lookups run (a test may hold it suspended).
    init(store: CoverStore, queue: DispatchQueue = DispatchQueue(label: "coverd.audit")) {
        self.store = store
        self.queue = queue
    }

    /// Looks up the covers of `ids`. `decide` runs on `target` with each
    /// batch and its stamps (nil where no regular file is) and returns how
    /// many of its covers are to be fetched again; `finished` runs on
    /// `target` after the last batch, with the totals. Nothing runs for no ids.
    func start(
        _ ids: [AlbumID], target: DispatchQueue, decide: @escaping @Sendable ([AlbumID], [FileStamp?]) -> Int,
        finished: @escaping @Sendable (_ checked: Int, _ lost: Int, _ duration: Duration) -> Void
    ) {
        guard !ids.isEmpty else { return }
        let began = ContinuousClock.now
        queue.async { [self] in
            for start in stride(from: 0, to: ids.count, by: Self.batchSize) {
                guard !isCancelled else { return }
                let batch = Array(ids[start..<min(start + Self.batchSize, ids.count)])
                let stamps = store.stamps(of: CoverFileNames(batch))
                target.async { [self] in
                    guard !isCancelled else { return }
                    let lost = decide(batch, stamps)
                    progress.withLock { progress in
                        progress.checked += batch.count
                        progress.lost += lost
                    }
                }
            }
            target.async { [self] in
                let totals = progress.withLock { $0.cancelled ? nil : ($0.checked, $0.lost) }
                if let (checked, lost) = totals { finished(checked, lost, ContinuousClock.now - began) }
            }
        }
    }

    /// Stops the lookups: after it returns no decision or summary starts
    /// (one already running on `target` finishes).
    func cancel() {
        progress.withLock { $0.cancelled = true }
    }

    private var isCancelled: Bool {
        progress.withLock { $0.cancelled }
    }

    /// Blocks until the lookups submitted so far are done (for tests).
    func waitUntilIdle() {
        queue.sync {}
    }
}
