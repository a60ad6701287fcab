import Foundation
import CoverdCache
import CoverdFetch
import CoverdModel
import CoverdRecords

/// The coordinator's decisions, as a state machine: which albums exist, the
/// state of each cover, and one job per URL (however many albums share it).
///
/// Events go in (albums updated or withdrawn, fetches and stores finished,
/// timers due); effects come out (fetch, cancel, prepare, index, post) for
/// the coordinator to perform. File checks and renames go through
/// `CoverFiles`. Not thread-safe: the coordinator calls it from one queue.
public struct SyncPlanner {
    var tracked: [AlbumID: TrackedAlbum] = [:]
    var jobs: [CoverURL: CoverJob] = [:]
    /// Rows from the index not yet matched by a record in this run.
    var persisted = PersistedRows()
    var retries = RetryHeap()
    /// When covers waiting for room on a full disk are next looked at: all
    /// share it, so one wake-up (and one log line) covers them all.
    var roomLook: Date?
    /// Albums whose cover is cached, by URL: a new album with such a URL gets
    /// a copy, not a download. Built the first time an album needs a cover
    /// (nil until then): a restart over a fully cached library never needs it.
    var cachedByURL: [CoverURL: AlbumIDGroup]?
    /// Albums the first scan took as cached on the index's word alone (its
    /// stamp, without a look at the file), for `CachedCoverCheck`.
    private var unchecked: [AlbumID] = []
    private(set) var summary = SyncSummary()
    var policy: RetryPolicy
    var random: () -> Double
    private var nextFetch: UInt64 = 0
    private var nextToken: UInt64 = 0

    public init(policy: RetryPolicy, random: @escaping () -> Double = { Double.random(in: 0..<1) }) {
        self.policy = policy
        self.random = random
    }

    /// What the index remembers from earlier runs.
    public mutating func load(_ rows: [IndexRow]) {
        expectRows(rows.count)
        rows.forEach { remember($0) }
    }

    /// Makes room for `count` rows about to be remembered.
    public mutating func expectRows(_ count: Int) {
        tracked.reserveCapacity(count)
        persisted.reserve(count)
        unchecked.reserveCapacity(count)
    }

    /// One row the index remembers (rows come in id order at start-up).
    public mutating func remember(_ row: IndexRow) {
        persisted.append(row)
    }

    /// The albums taken as cached without a look at their files; the list is
    /// emptied. `CachedCoverCheck` looks at them (`differing`, `settleChecked`).
    public mutating func takeUnchecked() -> [AlbumID] {
        defer { unchecked = [] }
        return unchecked
    }

    /// The earliest time a waiting job is due, if any.
    public mutating func nextWakeUp() -> Date? {
        while let entry = retries.earliest {
            if case .waiting(_, let token)? = jobs[entry.url]?.phase, token == entry.token { return entry.due }
            _ = retries.pop()
        }
        return nil
    }

    // MARK: Records

    /// New or changed albums. A cached album with an unchanged URL costs nothing.
    public mutating func update(_ albums: [Album], now: Date, files: some CoverFiles) -> [SyncEffect] {
        var effects: [SyncEffect] = []
        var added: [Album] = []
        for album in albums {
            if var current = tracked[album.id] {
                current.restored = false
                if current.album.coverURL != album.coverURL {
                    detach(album.id, from: current.album.coverURL, effects: &effects)
                    files.remove(album.id)
                    setState(&current, .pending)  // Before the URL changes: it unlists the old URL's cached copy.
                    current.album = album
                    current.attempts = 0
                    current.error = nil
                    current.stamp = nil
                    current.nextRetry = nil
                    tracked[album.id] = current
                    attach(album.id, to: album.coverURL, now: now, retryWaiting: true, effects: &effects)
                } else if current.album.differsInContent(from: album) {
                    current.album = album
                    tracked[album.id] = current
                    if current.state == .failed { retryNow(album.coverURL, now: now, effects: &effects) }
                } else {
                    current.album = album  // Only the record file or position moved.
                    tracked[album.id] = current
                }
                effects.append(.index(.upsert(row(for: album.id, now: now))))
                continue
            }
            let previous = persisted.claim(album.id)
            if previous == nil { added.append(album) }
            track(album, previous: previous, trustingIndex: true, now: now, files: files, effects: &effects)
        }
        if !added.isEmpty { effects.append(.post(AlbumsAdded(albums: added))) }
        return effects
    }

    /// Albums whose records are gone: forgotten, their covers deleted.
    public mutating func withdraw(_ ids: [AlbumID], files: some CoverFiles) -> [SyncEffect] {
        var effects: [SyncEffect] = []
        for id in ids {
            guard var current = tracked.removeValue(forKey: id) else { continue }
            setState(&current, .pending)
            adjust(.pending, by: -1)
            detach(id, from: current.album.coverURL, effects: &effects)
            files.remove(id)
            effects.append(.index(.delete(id)))
            effects.append(.post(AlbumRemoved(id: id, record: current.album.record, coverURL: current.album.coverURL.string)))
        }
        return effects
    }

    /// A full scan finished. After the first one, index rows no record
    /// claimed belong to albums deleted while the daemon was stopped, unless
    /// their record file exists but could not be read: those are kept, from
    /// the index, until the file is fixed or deleted (nothing is lost to a typo).
    public mutating func scanCompleted(_ scan: RecordScanCompleted, now: Date, files: some CoverFiles) -> [SyncEffect] {
        var effects: [SyncEffect] = []
        for row in persisted.takeUnclaimed() {
            if scan.isUnreadable(row.record), let album = row.album {
                track(album, previous: row, trustingIndex: false, now: now, files: files, effects: &effects)
                tracked[row.id]?.restored = true
                continue
            }
            files.remove(row.id)
            effects.append(.index(.delete(row.id)))
            effects.append(.post(AlbumRemoved(id: row.id, record: row.record, coverURL: row.coverURL)))
        }
        assert(scan.reason == .startup || scan.albumIDs != nil, "a \(scan.reason) scan without its album ids")
        if scan.reason != .startup, let present = scan.albumIDs {
            let missing = tracked.filter { !present.contains($0.key) && !scan.isUnreadable($0.value.album.record) }
            effects += withdraw(missing.keys.sorted(), files: files)
        }
        return effects
    }

    /// Record files or directories went away: albums kept only from the index go too.
    public mutating func recordsRemoved(_ paths: [String], files: some CoverFiles) -> [SyncEffect] {
        let orphans = tracked.filter { _, entry in
            entry.restored && paths.contains { entry.album.record == $0 || entry.album.record.hasPrefix($0 + "/") }
        }
        return withdraw(orphans.keys.sorted(), files: files)
    }

    // MARK: Starting an album

    private mutating func track(
        _ album: Album, previous: IndexRow?, trustingIndex: Bool, now: Date, files: some CoverFiles,
        effects: inout [SyncEffect]
    ) {
        var entry = TrackedAlbum(album: album, state: .pending)
        adjust(.pending, by: 1)
        defer {
            // A restart over an unchanged library writes nothing.
            let row = self.row(for: album.id, now: now)
            if previous.map({ !row.sameContent(as: $0) }) ?? true { effects.append(.index(.upsert(row))) }
        }
        guard let row = previous, row.coverURL == album.coverURL.string else {
            if previous != nil { files.remove(album.id) }  // A cover of the old URL.
            tracked[album.id] = entry
            // A new album on a URL that just failed shares that failure: 20,000 new
            // records naming one dead URL must not mean 20,000 requests.
            attach(album.id, to: album.coverURL, now: now, retryWaiting: previous != nil, effects: &effects)
            return
        }
        entry.attempts = row.attempts
        entry.error = row.error
        entry.httpStatus = row.httpStatus
        // A cached row, or a pending one whose file was renamed into place
        // just before a crash: a valid file on disk is adopted, not fetched.
        // In the first scan a cached row's stamp is taken on the index's
        // word, and its file looked at once the scan is over: a `stat` of
        // 100,000 covers the kernel has not cached took most of a cold start.
        let expected = row.state == .cached ? row : nil
        let indexStamp = trustingIndex ? expected?.stamp : nil
        if indexStamp != nil { unchecked.append(album.id) }
        if row.state != .failed,
            case .valid(let stamp) = indexStamp.map(CachedFileCheck.valid) ?? files.check(album.id, expected: expected)
        {
            entry.stamp = stamp
            entry.error = nil
            entry.attempts = 0
            setState(&entry, .cached)
            tracked[album.id] = entry
            return
        }
        let recordChanged = row.title != album.title || row.artist != album.artist || row.year != album.year || row.genre != album.genre
        if row.state == .failed {
            setState(&entry, .failed)
        }
        tracked[album.id] = entry
        if row.state != .cached, !recordChanged, let due = row.nextRetry, due > now {
            waitForRetry(album.id, on: album.coverURL, until: due, attempts: row.attempts, effects: &effects)
        } else {
            attach(album.id, to: album.coverURL, now: now, retryWaiting: recordChanged, effects: &effects)
        }
    }

    /// Adds an album whose retry time is still ahead (from the index) to a waiting job.
    private mutating func waitForRetry(_ id: AlbumID, on url: CoverURL, until due: Date, attempts: Int, effects: inout [SyncEffect]) {
        if jobs[url] != nil {
            attach(id, to: url, now: due, effects: &effects)
            return
        }
        let token = newToken()
        jobs[url] = CoverJob(url: url, waiters: [id], phase: .waiting(until: due, token: token), attempts: attempts)
        tracked[id]?.nextRetry = due
        retries.push(RetryHeap.Entry(due: due, url: url, token: token))
    }

    // MARK: Bookkeeping

    /// The only place an album's state changes, so counts and the cached-by-URL list stay exact.
    mutating func setState(_ entry: inout TrackedAlbum, _ state: CoverState) {
        guard entry.state != state else { return }
        if cachedByURL != nil {
            let url = entry.album.coverURL
            if entry.state == .cached {
                cachedByURL?[url]?.remove(entry.album.id)
                if cachedByURL?[url]?.isEmpty == true { cachedByURL?[url] = nil }
            }
            if state == .cached, cachedByURL?[url]?.insert(entry.album.id) == nil {
                cachedByURL?[url] = AlbumIDGroup(entry.album.id)
            }
        }
        adjust(entry.state, by: -1)
        adjust(state, by: 1)
        entry.state = state
    }

    /// The albums whose cover of `url` is cached, sorted.
    mutating func cachedCopies(of url: CoverURL) -> [AlbumID] {
        if cachedByURL == nil {
            var map: [CoverURL: AlbumIDGroup] = [:]
            for (id, entry) in tracked where entry.state == .cached {
                if map[entry.album.coverURL]?.insert(id) == nil { map[entry.album.coverURL] = AlbumIDGroup(id) }
            }
            cachedByURL = map
        }
        return cachedByURL?[url]?.sorted ?? []
    }

    private mutating func adjust(_ state: CoverState, by delta: Int) {
        switch state {
        case .cached: summary.cached += delta
        case .pending: summary.pending += delta
        case .failed: summary.failed += delta
        }
        summary.albums += delta
    }

    mutating func newFetchID() -> FetchID {
        nextFetch += 1
        return FetchID(nextFetch)
    }

    mutating func newToken() -> UInt64 {
        nextToken += 1
        return nextToken
    }

    /// The index row for a tracked album.
    func row(for id: AlbumID, now: Date) -> IndexRow {
        guard let entry = tracked[id] else { preconditionFailure("row(for:) of an untracked album \(id)") }
        var row = IndexRow(album: entry.album, state: entry.state, updatedAt: now)
        row.error = entry.error
        row.attempts = entry.attempts
        row.nextRetry = entry.nextRetry
        row.bytes = entry.stamp?.bytes
        row.fileMTime = entry.stamp?.mtime
        row.httpStatus = entry.httpStatus
        return row
    }
}

extension IndexRow {
    /// Equal in everything but the time it was written.
    func sameContent(as other: IndexRow) -> Bool {
        var other = other
        other.updatedAt = updatedAt
        return self == other
    }
}
