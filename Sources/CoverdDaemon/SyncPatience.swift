import Foundation
import CoverdModel
import CoverdSync

/// How long `coverd sync` waits for a cover that keeps failing transiently
/// (a connection error, a timeout, a 5xx, a full disk): the engine retries
/// it with backoff for ever, as a daemon should, but a one-shot run must end.
///
/// An album counts as given up once it has been failing for `limit` (from
/// the first time this sync saw it failing), or at once when its next try is
/// due later than that. A given-up album stays pending in the index, and a
/// daemon or the next sync retries it; this sync ends without it and exits 1.
public struct SyncPatience: Sendable {
    public var limit: TimeInterval
    /// When each album now failing was first seen failing.
    private var firstSeen: [AlbumID: Date] = [:]

    public init(limit: TimeInterval) {
        self.limit = limit
    }

    /// Of `failures` (the coordinator's, all of them), the pending albums given up by `now`.
    public mutating func givenUp(_ failures: [AlbumFailure], now: Date) -> Set<AlbumID> {
        var seen: [AlbumID: Date] = [:]
        var given: Set<AlbumID> = []
        for failure in failures where failure.state == .pending {
            let first = firstSeen[failure.album.id] ?? now
            seen[failure.album.id] = first
            let end = first.addingTimeInterval(limit)
            if now >= end || (failure.nextRetry.map { $0 > end } ?? false) { given.insert(failure.album.id) }
        }
        // An album cached (or failed for good) meanwhile starts afresh if it fails again.
        firstSeen = seen
        return given
    }
}
