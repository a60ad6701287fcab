import CoverdCache
import CoverdModel
import Foundation

/// Checks of covers the planner holds as cached: those the first scan took
/// on the index's word, and every one on reload (`retryAll`), each looked at
/// by `differing`, then `settleChecked`, driven by `CachedCoverCheck`. A cover found
/// missing or corrupt is deleted if it is there, fetched again, and said so
/// on the bus in one message per step.
extension SyncPlanner {
    /// Of `ids`, those the planner still holds as cached whose stamp on the
    /// disk (`found`, nil where no regular file was) differs from the one it
    /// holds, or that are `flagged` (by `coverd verify`, to be read whatever
    /// their stamp); and how many of `ids` it still holds as cached. Decides nothing.
    func differing(
        _ ids: [AlbumID], found: [FileStamp?], flagged: Set<AlbumID> = []
    ) -> (ids: [AlbumID], compared: Int) {
        precondition(ids.count == found.count, "\(ids.count) albums with \(found.count) stamps")
        var differ: [AlbumID] = []
        var compared = 0
        for (id, stamp) in zip(ids, found) {
            guard let entry = tracked[id], entry.state == .cached else { continue }
            compared += 1
            if stamp == nil || stamp != entry.stamp || flagged.contains(id) { differ.append(id) }
        }
        return (differ, compared)
    }

    /// Whether the planner holds `id` as cached.
    func isCached(_ id: AlbumID) -> Bool {
        tracked[id]?.state == .cached
    }

    /// The index row of an album the planner holds as cached; nil for any other.
    func cachedRow(_ id: AlbumID, now: Date) -> IndexRow? {
        isCached(id) ? row(for: id, now: now) : nil
    }

    /// What the covers of `ids` turned out to be, each read and validated
    /// off the coordinator's queue, and confirmed on it (a file changed
    /// since its read is looked at once more there: `CoverFileSteps`);
    /// nil for an album no longer cached (withdrawn, changed, fetched again
    /// meanwhile), which is left alone. A flagged cover found valid has its
    /// row written again, which clears `coverd verify`'s mark. Returns the
    /// effects and how many covers are to be fetched again.
    mutating func settleChecked(
        _ ids: [AlbumID], checks: [CachedFileCheck?], flagged: Set<AlbumID> = [], now: Date
    ) -> (effects: [SyncEffect], lost: Int) {
        precondition(ids.count == checks.count, "\(ids.count) albums with \(checks.count) checks")
        var effects: [SyncEffect] = []
        var lost: [CachedCoversLost.Cover] = []
        for (id, check) in zip(ids, checks) {
            guard let check, tracked[id]?.state == .cached else { continue }
            settle(id, check, flagged: flagged.contains(id), now: now, lost: &lost, effects: &effects)
        }
        if !lost.isEmpty { effects.append(.post(CachedCoversLost(covers: lost))) }
        return (effects, lost.count)
    }

    /// On reload: every waiting job starts now. Returns the albums held as
    /// cached, whose files the coordinator then has looked at off its queue
    /// (`CachedCoverCheck`, then `differing` and `settleChecked`): a missing
    /// or corrupt one is fetched again. Reading and inflating thousands of
    /// touched or flagged covers here would hold the coordinator's queue
    /// for seconds, past the watchdog's patience with a large library.
    mutating func retryAll(now: Date) -> (effects: [SyncEffect], cached: [AlbumID]) {
        var effects: [SyncEffect] = []
        for url in jobs.keys.sorted() { retryNow(url, now: now, effects: &effects) }
        // In no particular order: sorting 100,000 ids would hold the queue for nothing.
        return (effects, tracked.ids { $0.state == .cached })
    }

    /// Acts on what a cached album's file turned out to be. A valid file is
    /// kept, its stamp updated (and a flagged one's row written, which clears
    /// `coverd verify`'s mark); otherwise the album is fetched again, and a
    /// file that is not a valid PNG is deleted meanwhile.
    private mutating func settle(
        _ id: AlbumID, _ check: CachedFileCheck, flagged: Bool, now: Date,
        lost: inout [CachedCoversLost.Cover], effects: inout [SyncEffect]
    ) {
        guard var entry = tracked[id], entry.state == .cached else { return }
        let reason: String
        switch check {
        case .valid(let stamp):
            if stamp != entry.stamp || flagged {
                entry.stamp = stamp
                tracked.put(entry)
                effects.append(.index(.upsert(row(for: id, now: now))))
            }
            return
        case .missing:
            reason = "cached cover was missing"
        case .invalid(let detail):
            reason = "cached cover was corrupt: \(detail)"
            effects.append(.removeCover(id))  // Only valid PNGs stay in covers/, even while the new one is fetched.
        case .unusable(let detail):
            reason = "cached cover could not be used: \(detail)"
        }
        entry.error = reason
        entry.stamp = nil
        resolutions[id] = nil  // Found again, or not, by the attempt that follows.
        tracked.setState(&entry, .pending)
        freshness.forget(id)
        tracked.put(entry)
        effects.append(.index(.upsert(row(for: id, now: now))))
        lost.append(CachedCoversLost.Cover(album: entry.album, path: paths.path(for: id), reason: reason))
        attach(id, to: JobKey(entry.album), now: now, effects: &effects)
    }
}
