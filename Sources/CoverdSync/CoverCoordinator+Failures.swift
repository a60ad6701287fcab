import Foundation
import CoverdModel

/// What a one-shot sync reads of the planner: the counts, and the albums
/// whose last attempt failed. Read under the coordinator's lock, off its
/// queue; no decision is made.
extension CoverCoordinator {
    /// The counts as the planner has them now (`SyncProgress` carries them too, throttled).
    public var summary: SyncSummary {
        state.withLock { $0.planner.summary }
    }

    /// Whether a revalidation runs, or one was due by `dueBy` (contract §8): a
    /// one-shot sync waits for those it found due, or a cron-only library would
    /// never be kept fresh; covers that come due again meanwhile (a failure's
    /// retry, a short max_age) are the next sync's.
    public func revalidationsOutstanding(dueBy: Date) -> Bool {
        state.withLock { $0.planner.hasRevalidationWork(dueBy: dueBy) }
    }

    /// The counts and, sorted by id, every album that is failed or pending
    /// after a failed attempt, taken together so that they agree. A walk of
    /// every tracked album: a few milliseconds for 100,000, so not for each
    /// progress message.
    public func failureReport() -> (summary: SyncSummary, failures: [AlbumFailure]) {
        state.withLock { state in
            let tracked = state.planner.tracked
            let failures = tracked.ids { $0.state != .cached && $0.error != nil }.sorted().compactMap { id -> AlbumFailure? in
                guard let entry = tracked[id], let error = entry.error else { return nil }
                return AlbumFailure(album: entry.album, state: entry.state, error: error, attempts: entry.attempts, nextRetry: entry.nextRetry)
            }
            return (state.planner.summary, failures)
        }
    }
}
