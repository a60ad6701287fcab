import Dispatch
import Synchronization
import CoverdCache
import CoverdModel

/// The look at the disk that the first scan puts off: the covers it took as
/// cached on the index's word (`SyncPlanner.takeUnchecked`) are looked up in
/// batches, from the end of that scan on (READY follows, once the sweep of
/// leftover temporary files is done too). Each reload has one of its own
/// for every cached cover, those `coverd verify` flagged read whatever their
/// stamps.
///
/// Why not before READY: after a cache drop the kernel builds an inode and a
/// dentry for every cover looked up, most of a cold start over a large
/// library (bench/HISTORY.md), in which the daemon had nothing else to do with
/// those files. What it costs: a cover deleted or damaged while the daemon
/// was stopped counts as cached in READY's `STATUS=` line, and is fetched
/// again once its batch is looked at, a second or two later.
///
/// Each batch: the stamps (size, modification time) are looked up on this
/// type's queue, and compared with the planner's (`differing`, under the
/// coordinator's lock: no decision). Only covers whose stamps differ (or,
/// on a reload, that `coverd verify` flagged) are read and validated, here
/// too, so that a library whose files were all touched (copied without
/// their times) does not hold the coordinator's queue; the verdicts are
/// then settled on that queue with a `stat` each (a file that changed again
/// since is checked there once more).
///
/// Threading: one `start` per instance; batches run in order on `queue`, and
/// `settle` and `finished` run on `target` (the coordinator's queue). Once
/// `cancel` has run on `target`, neither runs again.
final class CachedCoverCheck: Sendable {
    private let queue: DispatchQueue
    private let state = Mutex((started: false, cancelled: false))
    /// Covers per batch: few enough that one batch's decisions take the
    /// coordinator's queue for about a millisecond, many enough to cost one lock each.
    static let batchSize = 1024

    /// What the check asks of the coordinator.
    struct Steps: Sendable {
        /// The albums of a batch whose stamps as found (nil: no regular file)
        /// differ from the planner's, or that are flagged, and how many of the
        /// batch it still holds as cached.
        var differing: @Sendable (_ ids: [AlbumID], _ found: [FileStamp?]) -> (ids: [AlbumID], compared: Int)
        /// Decides on the verdicts (on `target`); returns how many covers are to be fetched again.
        var settle: @Sendable (_ ids: [AlbumID], _ verdicts: [CoverVerdict]) -> Int
        /// The totals, on `target`, after the last batch.
        var finished: @Sendable (_ compared: Int, _ lost: Int, _ duration: Duration) -> Void
    }

    init() {
        queue = DispatchQueue(label: "coverd.cached-covers")
    }

    /// Checks the covers of `ids` in `files`; nothing runs for no ids.
    func start(_ ids: [AlbumID], in files: DiskCoverFiles, target: DispatchQueue, steps: Steps) {
        guard !ids.isEmpty else { return }
        let first = state.withLock { state in
            defer { state.started = true }
            return !state.started
        }
        precondition(first, "a cached-cover check started twice")
        let began = ContinuousClock.now
        queue.async { [self] in
            var compared = 0
            var lost = 0
            for start in stride(from: 0, to: ids.count, by: Self.batchSize) {
                guard !isCancelled else { return }
                let batch = Array(ids[start..<min(start + Self.batchSize, ids.count)])
                let found = steps.differing(batch, files.store.stamps(of: CoverFileNames(batch)))
                compared += found.compared
                guard !found.ids.isEmpty else { continue }
                var verdicts: [CoverVerdict] = []
                verdicts.reserveCapacity(found.ids.count)
                for id in found.ids {
                    // Each may be a full read and inflate: a stop or a newer reload need not wait for the batch.
                    guard !isCancelled else { return }
                    verdicts.append(files.inspect(id))
                }
                lost += target.sync { isCancelled ? 0 : steps.settle(found.ids, verdicts) }
            }
            target.async { [self, compared, lost] in
                if !isCancelled { steps.finished(compared, lost, ContinuousClock.now - began) }
            }
        }
    }

    /// Stops the check; call it on `target`, so that no decision is half made.
    func cancel() {
        state.withLock { $0.cancelled = true }
    }

    private var isCancelled: Bool {
        state.withLock { $0.cancelled }
    }

    /// Blocks until the batches submitted so far are done (for tests; never
    /// on `target`, which a batch may be waiting for).
    func waitUntilIdle() {
        queue.sync {}
    }
}
