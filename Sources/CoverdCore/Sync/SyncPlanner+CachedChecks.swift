import Foundation

/// Checks of covers the planner holds as cached: after the first scan, which
/// took them as cached on the index's word (`checkCached`), and on reload
/// (`retryAll`). A cover found missing or corrupt is fetched again, and
/// said so on the bus.
extension SyncPlanner {
    /// Stamps looked up on the disk after the first scan, one for each album
    /// in `ids` (from `takeUnchecked`); nil where no regular file was found.
    /// A stamp equal to the album's settles it. Anything else is checked on
    /// the disk again, now: the file may have been replaced since the lookup
    /// (a new cover renamed into place), and a valid one is adopted. An album
    /// no longer cached (withdrawn, changed or refetching meanwhile) is left
    /// alone. Returns the effects and how many covers are to be fetched again.
    public mutating func checkCached(
        _ ids: [AlbumID], stamps: [FileStamp?], now: Date, files: some CoverFiles
    ) -> (effects: [SyncEffect], lost: Int) {
        precondition(ids.count == stamps.count, "\(ids.count) albums checked with \(stamps.count) stamps")
        var effects: [SyncEffect] = []
        var lost = 0
        for (id, found) in zip(ids, stamps) {
            guard let entry = tracked[id], entry.state == .cached, found == nil || found != entry.stamp else { continue }
            if !recheck(id, flagged: false, now: now, files: files, effects: &effects) { lost += 1 }
        }
        return (effects, lost)
    }

    /// On reload: every waiting job starts now, and cached files that went
    /// missing or were found corrupt (by `coverd verify`) are fetched again.
    public mutating func retryAll(now: Date, files: some CoverFiles, flagged: Set<AlbumID>) -> [SyncEffect] {
        var effects: [SyncEffect] = []
        for url in jobs.keys.sorted() { retryNow(url, now: now, effects: &effects) }
        for id in tracked.keys.sorted() where tracked[id]?.state == .cached {
            recheck(id, flagged: flagged.contains(id), now: now, files: files, effects: &effects)
        }
        return effects
    }

    /// Checks a cached album's file on the disk (read and validated unless its
    /// stamp is the one the album has, and always when `flagged`). A valid
    /// file is kept, its stamp updated; otherwise the album is fetched again.
    /// Returns whether the file was valid.
    @discardableResult
    private mutating func recheck(
        _ id: AlbumID, flagged: Bool, now: Date, files: some CoverFiles, effects: inout [SyncEffect]
    ) -> Bool {
        guard var entry = tracked[id], entry.state == .cached else { return true }
        let reason: String
        switch files.check(id, expected: flagged ? nil : row(for: id, now: now)) {
        case .valid(let stamp):
            if stamp != entry.stamp || flagged {
                entry.stamp = stamp
                tracked[id] = entry
                effects.append(.index(.upsert(row(for: id, now: now))))
            }
            return true
        case .missing:
            reason = "was missing"
        case .invalid(let detail):
            reason = "was corrupt: \(detail)"
        }
        entry.error = "cached cover \(reason)"
        entry.stamp = nil
        setState(&entry, .pending)
        tracked[id] = entry
        effects.append(.index(.upsert(row(for: id, now: now))))
        effects.append(.post(CachedCoverLost(album: entry.album, path: files.path(for: id), reason: reason)))
        attach(id, to: entry.album.coverURL, now: now, effects: &effects)
        return false
    }
}

extension IndexRow {
    /// The cover file's size and modification time when the row was written, if it has them.
    var stamp: FileStamp? {
        guard let bytes, let fileMTime else { return nil }
        return FileStamp(bytes: bytes, mtime: fileMTime)
    }
}
