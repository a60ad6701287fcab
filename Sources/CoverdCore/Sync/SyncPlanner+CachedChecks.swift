import Foundation

/// Checks of covers the planner holds as cached: those the first scan took
/// on the index's word (`differing`, then `settleChecked`, driven by
/// `CachedCoverCheck`), and every one on reload (`retryAll`). A cover found
/// missing or corrupt is deleted if it is there, fetched again, and said so
/// on the bus in one message per step.
extension SyncPlanner {
    /// Of `ids`, those the planner still holds as cached whose stamp on the
    /// disk (`found`, nil where no regular file was) differs from the one it
    /// holds; and how many of `ids` it still holds as cached. Decides nothing.
    public func differing(_ ids: [AlbumID], found: [FileStamp?]) -> (ids: [AlbumID], compared: Int) {
        precondition(ids.count == found.count, "\(ids.count) albums with \(found.count) stamps")
        var differ: [AlbumID] = []
        var compared = 0
        for (id, stamp) in zip(ids, found) {
            guard let entry = tracked[id], entry.state == .cached else { continue }
            compared += 1
            if stamp == nil || stamp != entry.stamp { differ.append(id) }
        }
        return (differ, compared)
    }

    /// Verdicts on covers whose stamps differed, each read and validated off
    /// the coordinator's queue. A verdict stands if the file still has the
    /// stamp it was read with (one `stat`); a file that changed since is
    /// checked on the disk once more, here. An album no longer cached
    /// (withdrawn, changed, fetched again meanwhile) is left alone. Returns
    /// the effects and how many covers are to be fetched again.
    public mutating func settleChecked(
        _ ids: [AlbumID], verdicts: [CoverVerdict], now: Date, files: some CoverFiles
    ) -> (effects: [SyncEffect], lost: Int) {
        precondition(ids.count == verdicts.count, "\(ids.count) albums with \(verdicts.count) verdicts")
        var effects: [SyncEffect] = []
        var lost: [CachedCoversLost.Cover] = []
        for (id, verdict) in zip(ids, verdicts) where tracked[id]?.state == .cached {
            let check = files.stamp(id) == verdict.stamp ? verdict.check : files.check(id, expected: row(for: id, now: now))
            settle(id, check, flagged: false, now: now, files: files, lost: &lost, effects: &effects)
        }
        if !lost.isEmpty { effects.append(.post(CachedCoversLost(covers: lost))) }
        return (effects, lost.count)
    }

    /// On reload: every waiting job starts now, and cached files that went
    /// missing or were found corrupt (by `coverd verify`) are fetched again.
    public mutating func retryAll(now: Date, files: some CoverFiles, flagged: Set<AlbumID>) -> [SyncEffect] {
        var effects: [SyncEffect] = []
        var lost: [CachedCoversLost.Cover] = []
        for url in jobs.keys.sorted() { retryNow(url, now: now, effects: &effects) }
        for id in tracked.keys.sorted() where tracked[id]?.state == .cached {
            let isFlagged = flagged.contains(id)
            // Read and validated when flagged; otherwise only if its stamp changed.
            let check = files.check(id, expected: isFlagged ? nil : row(for: id, now: now))
            settle(id, check, flagged: isFlagged, now: now, files: files, lost: &lost, effects: &effects)
        }
        if !lost.isEmpty { effects.append(.post(CachedCoversLost(covers: lost))) }
        return effects
    }

    /// Acts on what a cached album's file turned out to be. A valid file is
    /// kept, its stamp updated (and a flagged one's row written, which clears
    /// `coverd verify`'s mark); otherwise the album is fetched again, and a
    /// file that is not a valid PNG is deleted meanwhile.
    private mutating func settle(
        _ id: AlbumID, _ check: CachedFileCheck, flagged: Bool, now: Date, files: some CoverFiles,
        lost: inout [CachedCoversLost.Cover], effects: inout [SyncEffect]
    ) {
        guard var entry = tracked[id], entry.state == .cached else { return }
        let reason: String
        switch check {
        case .valid(let stamp):
            if stamp != entry.stamp || flagged {
                entry.stamp = stamp
                tracked[id] = entry
                effects.append(.index(.upsert(row(for: id, now: now))))
            }
            return
        case .missing:
            reason = "cached cover was missing"
        case .invalid(let detail):
            reason = "cached cover was corrupt: \(detail)"
            files.remove(id)  // Only valid PNGs stay in covers/, even while the new one is fetched.
        case .unusable(let detail):
            reason = "cached cover could not be used: \(detail)"
        }
        entry.error = reason
        entry.stamp = nil
        setState(&entry, .pending)
        tracked[id] = entry
        effects.append(.index(.upsert(row(for: id, now: now))))
        lost.append(CachedCoversLost.Cover(album: entry.album, path: files.path(for: id), reason: reason))
        attach(id, to: entry.album.coverURL, now: now, effects: &effects)
    }
}
