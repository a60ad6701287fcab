import CoverdBase
import CoverdCache
import CoverdFetch
import CoverdLookup
import CoverdModel
import CoverdRecords
import Foundation

/// The coordinator's decisions, as a pure state machine: which albums exist,
/// the state of each cover, and one job per URL or per lookup (however many
/// albums share it).
///
/// Events go in (albums updated or withdrawn, fetches, lookups and staging
/// finished, timers due), with what the files turned out to be where a decision needs
/// it; effects come out (fetch, look up, cancel, stage, remove, discard, index, post)
/// for the coordinator to perform. The planner does no I/O: what it needs
/// looked at on disk it names first (`coversToCheck`,
/// `temporariesToCommit`, `needsFreeSpace`), and `CoverFileSteps` runs each
/// step against the files that way. Not thread-safe: the coordinator calls it
/// from one queue.
struct SyncPlanner {
    var tracked = TrackedAlbums()
    var jobs: [JobKey: CoverJob] = [:]
    /// Where lookups found the covers of albums whose record has no URL.
    var resolutions: [AlbumID: Resolution] = [:]
    /// Rows from the index not yet matched by a record in this run.
    var persisted = PersistedRows()
    /// Albums that left the records, their covers kept in `removed/` for `keepRemoved`.
    var kept = KeptCovers()
    /// How long a removed album's cover is kept (`cache.keep_removed`); zero: deleted at once.
    var keepRemoved: Duration
    var retries = RetryHeap()
    /// When each cached cover was confirmed, and when it is to be revalidated (contract §8).
    var freshness: FreshnessSchedule
    /// Revalidations in progress, by job.
    var revalidations: [JobKey: Revalidation] = [:]
    /// When covers waiting for room on a full disk are next looked at: all
    /// share it, so one wake-up (and one log line) covers them all.
    var roomLook: Date?
    /// Albums the first scan took as cached on the index's word alone (its
    /// stamp, without a look at the file), for `CachedCoverCheck`.
    var unchecked: [AlbumID] = []
    var policy: RetryPolicy
    /// Where the covers are, for the paths in messages.
    let paths: CoverPaths
    var random: () -> Double
    private var nextFetch: UInt64 = 0
    private var nextToken: UInt64 = 0

    init(
        policy: RetryPolicy, paths: CoverPaths, keepRemoved: Duration = .seconds(604_800), maxAge: Duration = .seconds(2_592_000),
        random: @escaping () -> Double = { Double.random(in: 0..<1) }
    ) {
        self.policy = policy
        freshness = FreshnessSchedule(maxAge: maxAge)
        self.keepRemoved = keepRemoved
        self.paths = paths
        self.random = random
    }

    var summary: SyncSummary {
        var summary = tracked.summary
        summary.outdated = freshness.outdated.count
        summary.revalidating = revalidations.values.reduce(0) { $0 + $1.albums.count }
        return summary
    }

    /// What the index remembers from earlier runs.
    mutating func load(_ rows: [IndexRow]) {
        expectRows(rows.count)
        rows.forEach { remember($0) }
    }

    /// Makes room for `count` rows about to be remembered.
    mutating func expectRows(_ count: Int) {
        tracked.reserveCapacity(count)
        freshness.reserve(count)
        persisted.reserve(count)
        unchecked.reserveCapacity(count)
    }

    /// One row the index remembers (rows come in id order at start-up).
    mutating func remember(_ row: IndexRow) {
        if row.removedAt != nil {
            kept.keep(row)
        } else {
            persisted.append(row)
        }
    }

    /// The albums taken as cached without a look at their files; the list is
    /// emptied. `CachedCoverCheck` looks at them (`differing`, `settleChecked`).
    mutating func takeUnchecked() -> [AlbumID] {
        defer { unchecked = [] }
        return unchecked
    }

    /// The earliest time a waiting job, or a kept cover's purge, is due, if any.
    mutating func nextWakeUp() -> Date? {
        let purge = [kept.nextDue(keepFor: keepRemoved), nextRevalidation()].compactMap { $0 }.min()
        while let entry = retries.earliest {
            if case .waiting(_, let token)? = jobs[entry.key]?.phase, token == entry.token {
                return purge.map { min($0, entry.due) } ?? entry.due
            }
            _ = retries.pop()
        }
        return purge
    }

    /// Of `albums`, those coming back whose cover was kept, with the same job:
    /// their covers are to be moved back into `covers/` and looked at before
    /// `update` (`CoverFileSteps`).
    func keptToRestore(_ albums: [Album], now: Date) -> [FileCheckRequest] {
        guard kept.count > 0 else { return [] }
        return albums.compactMap { album in
            guard tracked[album.id] == nil, let row = kept.row(album.id), row.hasSameJob(as: album),
                let removedAt = row.removedAt, removedAt.addingTimeInterval(keepRemoved.seconds) > now  // Due covers are purged, not restored.
            else { return nil }
            var expected = row
            expected.removedAt = nil
            return FileCheckRequest(id: album.id, expected: expected)
        }
    }

    /// Of the covers `found` in `removed/`, those no kept row accounts for (a
    /// crash came between a move and its row's change): to be deleted.
    func orphanedKept(_ found: [AlbumID]) -> [SyncEffect] {
        found.filter { kept.row($0) == nil }.sorted().map { .purgeKept($0) }
    }

    /// Covers `keepAside` meant to keep that could not be moved aside (they
    /// were deleted): no longer kept, their rows deleted, and their removal
    /// told without a time to be kept until.
    mutating func keepsFailed(_ ids: Set<AlbumID>, in effects: [SyncEffect]) -> [SyncEffect] {
        for id in ids { _ = kept.take(id) }
        return effects.map { effect in
            switch effect {
            case .index(.upsert(let row)) where ids.contains(row.id) && row.removedAt != nil:
                return .index(.delete(row.id))
            case .post(let message as AlbumRemoved) where ids.contains(message.id):
                var unkept = message
                unkept.keptUntil = nil
                return .post(unkept)
            default:
                return effect
            }
        }
    }

    // MARK: Records

    /// The files `update(albums)` needs looked at: new albums whose index row
    /// (same job, not failed) may have a cover on disk without a stamp to
    /// trust, a pending row's file renamed into place just before a crash, say.
    mutating func coversToCheck(before albums: [Album]) -> [FileCheckRequest] {
        guard persisted.hasRowsToCheck else { return [] }
        return albums.compactMap { album in
            guard tracked[album.id] == nil, persisted.mayNeedCheck(album.id), let row = persisted.peek(album.id),
                row.hasSameJob(as: album)
            else { return nil }
            return FileCheckRequest(id: album.id, expected: row.state == .cached ? row : nil)
        }
    }

    /// New or changed albums, with what their files turned out to be
    /// (`coversToCheck`), and what the kept covers moved back for them are
    /// (`keptToRestore`). A cached album with an unchanged URL costs nothing.
    mutating func update(
        _ albums: [Album], checks: [AlbumID: CachedFileCheck] = [:], restored: [AlbumID: CachedFileCheck] = [:], now: Date
    ) -> [SyncEffect] {
        var effects: [SyncEffect] = []
        var added: [Album] = []
        for album in albums {
            if var current = tracked[album.id] {
                current.restored = false
                let key = JobKey(album)
                if JobKey(current.album) != key {
                    detach(album.id, from: JobKey(current.album), effects: &effects)
                    effects.append(.removeCover(album.id))
                    resolutions[album.id] = nil
                    tracked.setState(&current, .pending)  // Before the job changes: it unlists the old job's cached copy.
                    freshness.forget(album.id)  // The old cover's age and validators are not the new one's.
                    tracked.replaceAlbum(of: &current, with: album)
                    current.attempts = 0
                    current.error = nil
                    current.stamp = nil
                    current.nextRetry = nil
                    tracked.put(current)
                    attach(album.id, to: key, now: now, retryWaiting: true, effects: &effects)
                } else if current.album.differsInContent(from: album) {
                    tracked.replaceAlbum(of: &current, with: album)
                    tracked.put(current)
                    if current.state == .failed { retryNow(key, now: now, effects: &effects) }
                } else {
                    tracked.replaceAlbum(of: &current, with: album)  // Only the record file or position moved.
                    tracked.put(current)
                }
                effects.append(.index(.upsert(row(for: album.id, now: now))))
                continue
            }
            if let keptRow = kept.take(album.id) {
                added.append(album)
                guard let check = restored[album.id] else {
                    // Another URL or lookup now, or kept past keep_removed: the kept cover is not to come back.
                    effects.append(.purgeKept(album.id))
                    track(album, previous: nil, trustingIndex: false, check: nil, now: now, effects: &effects)
                    continue
                }
                // Back in `covers/` already (`keptToRestore`): a valid file is the cover again, with no download.
                if case .invalid = check { effects.append(.removeCover(album.id)) }
                track(album, previous: keptRow, trustingIndex: false, check: check, now: now, effects: &effects)
                if tracked[album.id]?.state == .cached { effects.append(.post(CoverRestored(album: album, path: paths.path(for: album.id)))) }
                continue
            }
            let previous = persisted.claim(album.id)
            if previous == nil { added.append(album) }
            track(album, previous: previous, trustingIndex: true, check: checks[album.id], now: now, effects: &effects)
        }
        if !added.isEmpty { effects.append(.post(AlbumsAdded(albums: added))) }
        return effects
    }

    /// Albums whose records are gone: forgotten; a cached cover is kept aside
    /// for `keepRemoved` in case its album comes back, others deleted.
    mutating func withdraw(_ ids: [AlbumID], now: Date) -> [SyncEffect] {
        var effects: [SyncEffect] = []
        for id in ids {
            guard let current = tracked[id] else { continue }
            let row = self.row(for: id, now: now)
            _ = tracked.remove(id)
            detach(id, from: JobKey(current.album), effects: &effects)
            resolutions[id] = nil
            freshness.forget(id)
            let keptUntil = keepAside(row, now: now, effects: &effects)
            effects.append(.post(AlbumRemoved(id: id, record: current.album.record, coverURL: current.album.coverURL?.string, keptUntil: keptUntil)))
        }
        return effects
    }

    /// The files `scanCompleted(scan)` needs looked at: those of index rows
    /// kept because their record file exists but could not be read.
    mutating func coversToCheck(beforeCompleting scan: RecordScanCompleted) -> [FileCheckRequest] {
        guard !scan.unreadable.isEmpty else { return [] }
        return persisted.unclaimedRows().compactMap { row in
            guard scan.isUnreadable(row.record), row.state != .failed, row.album != nil else { return nil }
            return FileCheckRequest(id: row.id, expected: row.state == .cached ? row : nil)
        }
    }

    /// A full scan finished. After the first one, index rows no record
    /// claimed belong to albums deleted while the daemon was stopped, unless
    /// their record file exists but could not be read: those are kept, from
    /// the index, until the file is fixed or deleted (nothing is lost to a
    /// typo), with what their files turned out to be.
    mutating func scanCompleted(
        _ scan: RecordScanCompleted, checks: [AlbumID: CachedFileCheck] = [:], now: Date
    ) -> [SyncEffect] {
        var effects: [SyncEffect] = []
        for row in persisted.takeUnclaimed() {
            if scan.isUnreadable(row.record), let album = row.album {
                track(album, previous: row, trustingIndex: false, check: checks[row.id], now: now, effects: &effects)
                if var entry = tracked[row.id] {
                    entry.restored = true
                    tracked.put(entry)
                }
                continue
            }
            let keptUntil = keepAside(row, now: now, effects: &effects)
            effects.append(.post(AlbumRemoved(id: row.id, record: row.record, coverURL: row.coverURL, keptUntil: keptUntil)))
        }
        assert(scan.reason == .startup || scan.albumIDs != nil, "a \(scan.reason) scan without its album ids")
        if scan.reason != .startup, let present = scan.albumIDs {
            let missing = tracked.ids { !present.contains($0.album.id) && !scan.isUnreadable($0.album.record) }
            effects += withdraw(missing.sorted(), now: now)
        }
        return effects
    }

    /// Record files or directories went away: albums kept only from the index go too.
    mutating func recordsRemoved(_ paths: [String], now: Date) -> [SyncEffect] {
        let orphans = tracked.ids { entry in
            entry.restored && paths.contains { entry.album.record == $0 || entry.album.record.hasPrefix($0 + "/") }
        }
        return withdraw(orphans.sorted(), now: now)
    }

    /// The row of an album that left the records: a cached cover is moved
    /// aside and the row kept with `removedAt` (returns until when), anything
    /// else deleted with its row.
    private mutating func keepAside(_ row: IndexRow, now: Date, effects: inout [SyncEffect]) -> Date? {
        guard row.state == .cached, keepRemoved > .zero else {
            effects.append(.removeCover(row.id))
            effects.append(.index(.delete(row.id)))
            return nil
        }
        var keptRow = row
        keptRow.removedAt = now
        keptRow.updatedAt = now
        kept.keep(keptRow)
        effects.append(.keepCover(row.id))
        effects.append(.index(.upsert(keptRow)))
        return now.addingTimeInterval(keepRemoved.seconds)
    }

    // MARK: Starting an album

    /// Starts tracking `album`. `check` is what its file turned out to be,
    /// where `coversToCheck` asked for a look; a cached row's stamp is taken
    /// on the index's word while `trustingIndex`.
    private mutating func track(
        _ album: Album, previous: IndexRow?, trustingIndex: Bool, check: CachedFileCheck?, now: Date,
        effects: inout [SyncEffect]
    ) {
        var entry = tracked.start(album)
        defer {
            // A restart over an unchanged library writes nothing.
            let row = self.row(for: album.id, now: now)
            if previous.map({ !row.sameContent(as: $0) }) ?? true { effects.append(.index(.upsert(row))) }
        }
        let key = JobKey(album)
        guard let row = previous, row.hasSameJob(as: album) else {
            if previous != nil { effects.append(.removeCover(album.id)) }  // A cover of the old URL or lookup.
            tracked.put(entry)
            // A new album on a URL that just failed shares that failure: 20,000 new
            // records naming one dead URL must not mean 20,000 requests.
            attach(album.id, to: key, now: now, retryWaiting: previous != nil, effects: &effects)
            return
        }
        entry.attempts = row.attempts
        entry.error = row.error
        entry.httpStatus = row.httpStatus
        // A cached row, or a pending one whose file was renamed into place
        // just before a crash: a valid file on disk is adopted, not fetched.
        // In the first scan a cached row's stamp is taken on the index's
        // word, and its file looked at once the scan is over: a `stat` of
        // every cover the kernel has not cached was most of a cold start
        // (bench/HISTORY.md).
        let indexStamp = trustingIndex && row.state == .cached ? row.stamp : nil
        if indexStamp != nil { unchecked.append(album.id) }
        assert(row.state == .failed || indexStamp != nil || check != nil, "no look at \(album.id)'s file, which may be there")
        if row.state != .failed, case .valid(let stamp)? = indexStamp.map(CachedFileCheck.valid) ?? check {
            entry.stamp = stamp
            entry.error = nil
            entry.attempts = 0
            tracked.setState(&entry, .cached)
            tracked.put(entry)
            // What a lookup found is kept: a warm restart asks nothing of MusicBrainz or the archive.
            if album.coverURL == nil { resolutions[album.id] = Resolution(row: row) }
            noteCached(album.id, checkedAt: row.checkedAt ?? row.updatedAt, validators: Validators(etag: row.etag, lastModified: row.lastModified))
            // A `coverd refresh` taken while no daemon ran.
            if let mark = row.refresh { refresh(album.id, mark: mark, now: now, effects: &effects) }
            return
        }
        let recordChanged = row.title != album.title || row.artist != album.artist || row.year != album.year || row.genre != album.genre
        if row.state == .failed {
            tracked.setState(&entry, .failed)
        }
        tracked.put(entry)
        if row.state != .cached, !recordChanged, row.refresh == nil, let due = row.nextRetry, due > now {
            waitForRetry(album.id, on: key, until: due, attempts: row.attempts, effects: &effects)
        } else {
            attach(album.id, to: key, now: now, retryWaiting: recordChanged || row.refresh != nil, effects: &effects)
        }
    }

    /// Adds an album whose retry time is still ahead (from the index) to a waiting job.
    private mutating func waitForRetry(_ id: AlbumID, on key: JobKey, until due: Date, attempts: Int, effects: inout [SyncEffect]) {
        if jobs[key] != nil {
            attach(id, to: key, now: due, effects: &effects)
            return
        }
        let token = newToken()
        jobs[key] = CoverJob(key: key, waiters: [id], phase: .waiting(until: due, token: token), attempts: attempts)
        if var entry = tracked[id] {
            entry.nextRetry = due
            tracked.put(entry)
        }
        retries.push(RetryEntry(due: due, key: key, token: token))
    }

    // MARK: Jobs: one per URL or lookup, however many albums share it

    /// Adds an album to its job. With no job, another album's cached copy
    /// of the same URL (or lookup) is used if there is one, else a fetch (or
    /// lookup) starts. A job waiting to retry starts at once when
    /// `retryWaiting` (the album's record changed); otherwise the album
    /// shares its last failure.
    mutating func attach(
        _ id: AlbumID, to key: JobKey, now: Date, retryWaiting: Bool = false, copyingCachedCopies: Bool = true, effects: inout [SyncEffect]
    ) {
        guard var job = jobs[key] else {
            let fetchID = newAttemptID()
            if copyingCachedCopies, let sibling = tracked.cachedCopies(of: key).first(where: { $0 != id }),
                let url = key.url ?? resolutions[sibling]?.url
            {
                var job = CoverJob(key: key, waiters: [id], phase: .staging(fetchID), resolution: resolutions[sibling])
                job.copiedFreshness = freshness.entry(sibling).map { ($0.checkedAt, freshness.validators(sibling)) }
                job.copiedOutdated = freshness.outdated.contains(sibling) || revalidations[key] != nil
                jobs[key] = job
                effects.append(.stage(StageRequest(fetchID: fetchID, job: key, url: url, source: .cachedCover(sibling), albums: [id])))
                return
            }
            jobs[key] = CoverJob(key: key, waiters: [id], phase: .inFlight(fetchID))
            effects.append(start(key, fetchID))
            return
        }
        switch job.phase {
        case .staging: job.lateWaiters.insert(id)
        case .inFlight: job.waiters.insert(id)
        case .waiting:
            job.waiters.insert(id)
            jobs[key] = job
            if retryWaiting {
                retryNow(key, now: now, effects: &effects)
                return
            }
            if let failure = job.lastFailure, var entry = tracked[id] {
                entry.error = failure.message
                entry.attempts = job.attempts
                tracked.setState(&entry, failure.permanent ? .failed : .pending)
                tracked.put(entry)
            }
        }
        jobs[key] = job
    }

    /// Removes an album from its job; a job nobody waits for is cancelled.
    mutating func detach(_ id: AlbumID, from key: JobKey, effects: inout [SyncEffect]) {
        guard var job = jobs[key] else { return }
        job.waiters.remove(id)
        job.lateWaiters.remove(id)
        guard job.waiters.isEmpty && job.lateWaiters.isEmpty else {
            jobs[key] = job
            return
        }
        jobs[key] = nil
        if case .inFlight(let fetchID) = job.phase { effects.append(.cancelAttempt(fetchID)) }
    }

    /// Starts a waiting job now (a changed record, a reload).
    mutating func retryNow(_ key: JobKey, now: Date, effects: inout [SyncEffect]) {
        guard var job = jobs[key], case .waiting = job.phase else { return }
        let fetchID = newAttemptID()
        job.phase = .inFlight(fetchID)
        job.attempts = 0
        jobs[key] = job
        effects.append(start(key, fetchID))
    }

    /// The effect that starts a job's attempt: a fetch of its URL, or its lookup.
    private func start(_ key: JobKey, _ fetchID: FetchID) -> SyncEffect {
        switch key {
        case .url(let url): return .fetch(fetchID, url)
        case .lookup(let request): return .lookUp(fetchID, request)
        }
    }

    // MARK: Outcomes

    /// A download ended. Stale outcomes (a job cancelled or restarted since) are ignored.
    mutating func fetchFinished(_ fetchID: FetchID, url: CoverURL, outcome: FetchOutcome, now: Date) -> [SyncEffect] {
        let key = JobKey.url(url)
        guard var job = jobs[key], job.phase == .inFlight(fetchID) else { return [] }
        switch outcome {
        case .success(let body):
            job.phase = .staging(fetchID)
            jobs[key] = job
            return [.stage(StageRequest(fetchID: fetchID, job: key, url: url, source: .download(body), albums: job.waiters.sorted()))]
        case .failure(let failure):
            if failure.kind == .cancelled { return [] }
            var effects: [SyncEffect] = []
            fail(key, FailedAttempt(failure), now: now, effects: &effects)
            return effects
        case .notModified:
            // Only a revalidation asks with validators; a 304 to a plain download is the server's error.
            var effects: [SyncEffect] = []
            fail(key, FailedAttempt(FetchFailure(kind: .http(304), message: "HTTP 304 to a request without validators", httpStatus: 304)),
                 now: now, effects: &effects)
            return effects
        }
    }

    /// A lookup ended: its cover (downloaded) is staged for every album
    /// waiting on it; "nothing found" fails them until `lookupRecheck`.
    /// Stale outcomes are ignored.
    mutating func lookupFinished(_ fetchID: FetchID, request: LookupRequest, outcome: LookupOutcome, now: Date) -> [SyncEffect] {
        let key = JobKey.lookup(request)
        guard var job = jobs[key], job.phase == .inFlight(fetchID) else { return [] }
        var effects: [SyncEffect] = []
        switch outcome {
        case .found(let resolution, let body):
            job.phase = .staging(fetchID)
            job.resolution = resolution
            jobs[key] = job
            effects.append(.stage(StageRequest(
                fetchID: fetchID, job: key, url: resolution.url, source: .download(body), albums: job.waiters.sorted())))
        case .notFound(let message):
            job.resolution = nil  // An earlier attempt's find is no longer this job's.
            jobs[key] = job
            fail(key, FailedAttempt(nothingFound: message), now: now, effects: &effects)
        case .failed(let failure):
            if failure.kind == .cancelled { return [] }
            job.resolution = nil
            jobs[key] = job
            fail(key, FailedAttempt(failure), now: now, effects: &effects)
        }
        return effects
    }

    /// Staging failed. A cached copy that could not be used is fetched (or looked up) instead.
    mutating func stagingFailed(_ fetchID: FetchID, job key: JobKey, failure: StagingFailure, now: Date) -> [SyncEffect] {
        // Stopping: the album is left as it is (pending, or cached with its old cover) for the next start.
        if case .stopped = failure { return [] }
        if isRevalidation(fetchID, job: key) { return revalidationStagingFailed(fetchID, job: key, failure: failure, now: now) }
        guard var job = jobs[key], job.phase == .staging(fetchID) else { return [] }
        job.waiters.formUnion(job.lateWaiters)
        job.lateWaiters = []
        if case .sourceUnavailable = failure {
            // The other album's copy is gone or bad: download instead.
            let fetchID = newAttemptID()
            job.phase = .inFlight(fetchID)
            job.resolution = nil
            jobs[key] = job
            return [start(key, fetchID)]
        }
        if case .storage(_, let bytes) = failure { job.storageBytes = bytes }
        jobs[key] = job
        var effects: [SyncEffect] = []
        fail(key, FailedAttempt(failure), now: now, effects: &effects)
        return effects
    }

    /// Of a job's staged temporaries, those to rename into place now: the
    /// files of albums that still want this job (none for a stale job). The
    /// caller renames them, then reports with `committed`.
    func temporariesToCommit(_ fetchID: FetchID, job key: JobKey, staged: StagedCovers) -> [AlbumID: TemporaryCover] {
        if isRevalidation(fetchID, job: key) { return revalidationTemporaries(fetchID, job: key, staged: staged) }
        guard let job = jobs[key], job.phase == .staging(fetchID) else { return [:] }
        return staged.temporaries.filter { id, _ in tracked[id].map { JobKey($0.album) == key } == true && job.waiters.contains(id) }
    }

    /// The renames `temporariesToCommit` asked for were made (`renamed`:
    /// each album's new stamp, or why its rename failed). Committed albums
    /// are cached; staged files nobody took are discarded; waiters that got
    /// no file go round again.
    mutating func committed(
        _ fetchID: FetchID, job key: JobKey, staged: StagedCovers, renamed: [AlbumID: Result<FileStamp, SystemError>],
        unchanged: Set<AlbumID> = [], now: Date
    ) -> [SyncEffect] {
        if isRevalidation(fetchID, job: key) {
            return revalidationCommitted(fetchID, job: key, staged: staged, renamed: renamed, unchanged: unchanged, now: now)
        }
        var effects: [SyncEffect] = []
        for (id, temporary) in staged.temporaries.sorted(by: { $0.key < $1.key }) where renamed[id] == nil {
            effects.append(.discard(temporary))
        }
        guard let job = jobs[key], job.phase == .staging(fetchID) else { return effects }
        assert(renamed.keys.allSatisfy { temporariesToCommit(fetchID, job: key, staged: staged)[$0] != nil }, "a rename not asked for")
        var unstored: Set<AlbumID> = job.lateWaiters
        var storageError: SystemError?
        for (id, outcome) in renamed.sorted(by: { $0.key < $1.key }) {
            guard var entry = tracked[id] else { continue }
            let stamp: FileStamp
            switch outcome {
            case .success(let renamedStamp):
                stamp = renamedStamp
            case .failure(let error):
                storageError = error
                unstored.insert(id)
                continue
            }
            entry.stamp = stamp
            entry.error = nil
            entry.attempts = 0
            entry.nextRetry = nil
            entry.httpStatus = staged.httpStatus
            tracked.setState(&entry, .cached)
            tracked.put(entry)
            if case .lookup = key { resolutions[id] = job.resolution }
            // A copy of another album's cover shares its validators and age; a download starts both anew.
            let copied = staged.copiedFrom != nil ? job.copiedFreshness : nil
            noteCached(id, checkedAt: copied?.checkedAt ?? now, validators: copied?.validators ?? staged.validators)
            if staged.copiedFrom != nil && job.copiedOutdated { freshness.ask(id, now: now) }
            let found = resolutions[id]
            effects.append(.index(.upsert(row(for: id, now: now))))
            if let url = key.url ?? found?.url {
                effects.append(.post(CoverCached(
                    album: entry.album, path: paths.path(for: id), url: url, source: found?.source ?? .url,
                    releaseID: found?.releaseID, releaseGroupID: found?.releaseGroupID, bytes: staged.bytes,
                    httpStatus: staged.httpStatus, duration: staged.duration)))
            }
        }
        // Waiters that got no file (they joined late, or a rename failed) go round again.
        unstored.formUnion(job.waiters.filter { staged.temporaries[$0] == nil })
        jobs[key] = nil
        guard !unstored.isEmpty else { return effects }
        if let storageError {
            jobs[key] = CoverJob(
                key: key, waiters: unstored, phase: .staging(fetchID), attempts: job.attempts, storageBytes: staged.bytes,
                resolution: job.resolution)
            fail(key, FailedAttempt(.storage(storageError, bytes: staged.bytes)), now: now, effects: &effects)
        } else {
            for id in unstored.sorted() { attach(id, to: key, now: now, effects: &effects) }
        }
        return effects
    }

    /// Whether a job due by `now` waits for room on a full disk: only then
    /// does `timerFired` need the free space measured.
    func needsFreeSpace(now: Date) -> Bool {
        jobs.values.contains { job in
            guard job.storageBytes != nil, case .waiting(let until, _) = job.phase else { return false }
            return until <= now
        }
    }

    /// Jobs whose retry time has come start again. One that failed for a
    /// full disk waits for the next look (`roomLook`, shared by all such
    /// jobs) while the cover would still not fit in `space` (measured when
    /// `needsFreeSpace` said so; nil otherwise): downloading it again only
    /// to fail again would waste the network. Each look that finds no room
    /// posts one `CoversWaitingForRoom` and moves the waiting albums' next
    /// try in the index to the next look.
    mutating func timerFired(now: Date, space: FreeSpace?) -> [SyncEffect] {
        var effects: [SyncEffect] = []
        let purged = kept.takeDue(now: now, keepFor: keepRemoved)
        for row in purged {
            effects.append(.purgeKept(row.id))
            effects.append(.index(.delete(row.id)))
        }
        if !purged.isEmpty { effects.append(.post(KeptCoversPurged(count: purged.count, keptFor: keepRemoved))) }
        var stillFull: [(JobKey, CoverJob)] = []
        while let entry = retries.earliest, entry.due <= now {
            _ = retries.pop()
            guard var job = jobs[entry.key], case .waiting(_, let token) = job.phase, token == entry.token else { continue }
            if let bytes = job.storageBytes, !(space?.fits(bytes) ?? true) {
                stillFull.append((entry.key, job))
                continue
            }
            job.storageBytes = nil
            let fetchID = newAttemptID()
            job.phase = .inFlight(fetchID)
            jobs[entry.key] = job
            effects.append(start(entry.key, fetchID))
        }
        let due = now.addingTimeInterval(policy.storageMaxDelay.seconds)
        if !stillFull.isEmpty {
            roomLook = due
            let largest = stillFull.compactMap { $0.1.storageBytes }.max() ?? 0
            effects.append(.post(CoversWaitingForRoom(count: stillFull.count, largestBytes: largest, retryAt: due)))
        }
        for (key, var job) in stillFull {
            let token = newToken()
            job.phase = .waiting(until: due, token: token)
            jobs[key] = job
            retries.push(RetryEntry(due: due, key: key, token: token))
            // `status` would otherwise show a next try already past while the disk stays full.
            for id in job.waiters.sorted() {
                guard var entry = tracked[id] else { continue }
                entry.nextRetry = due
                tracked.put(entry)
                effects.append(.index(.upsert(row(for: id, now: now))))
            }
        }
        return effects + startDueRevalidations(now: now)
    }

    /// Records a failed attempt for every album waiting on `key` and schedules the next one.
    private mutating func fail(_ key: JobKey, _ attempt: FailedAttempt, now: Date, effects: inout [SyncEffect]) {
        guard var job = jobs[key] else { return }
        job.attempts += 1
        if !attempt.storage { job.storageBytes = nil }
        let delay: Duration
        if attempt.nothingFound {
            // Spread out, so that thousands of albums looked up in one first sync are not looked up again all at once.
            delay = policy.lookupRecheck * (1.0 + 0.2 * random())
        } else if attempt.permanent {
            delay = policy.failedInterval
        } else if let retryAfter = attempt.retryAfter {
            // Honour the server, within reason: never sooner than half the first backoff, never beyond the failed interval.
            delay = min(max(retryAfter, policy.initialDelay / 2), policy.failedInterval)
        } else {
            let backoff = Backoff(policy: policy).delay(attempt: job.attempts, unit: random())
            delay = attempt.storage ? min(backoff, policy.storageMaxDelay) : backoff
        }
        var due = now.addingTimeInterval(delay.seconds)
        if attempt.outOfSpace {
            // Every cover waiting for room is looked at together (see `timerFired`); a look
            // further off than the storage limit (the clock stepped back) is not joined.
            if let look = roomLook, look > now, look <= now.addingTimeInterval(policy.storageMaxDelay.seconds) {
                due = look
            } else {
                roomLook = due
            }
        }
        let token = newToken()
        job.phase = .waiting(until: due, token: token)
        job.lastFailure = (attempt.message, attempt.permanent, attempt.httpStatus)
        jobs[key] = job
        retries.push(RetryEntry(due: due, key: key, token: token))
        for id in job.waiters.sorted() {
            guard var entry = tracked[id] else { continue }
            resolutions[id] = nil  // What found its last cover, if it had one, is not what it shows now.
            entry.error = attempt.message
            entry.attempts = job.attempts
            entry.nextRetry = due
            entry.httpStatus = attempt.httpStatus
            tracked.setState(&entry, attempt.permanent ? .failed : .pending)
            tracked.put(entry)
            effects.append(.index(.upsert(row(for: id, now: now))))
            effects.append(.post(CoverFailed(
                album: entry.album, url: key.url ?? job.resolution?.url, reason: attempt.message, nothingFound: attempt.nothingFound,
                httpStatus: attempt.httpStatus, duration: attempt.duration,
                permanent: attempt.permanent, attempt: job.attempts, retryAt: due)))
        }
    }

    // MARK: Bookkeeping

    mutating func newAttemptID() -> FetchID {
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
        if let found = resolutions[id] {
            // Only the ids the record did not give: what a lookup learnt.
            row.source = found.source
            row.foundReleaseID = found.releaseID.flatMap { $0 == entry.album.releaseID ? nil : $0.rawValue }
            row.foundReleaseGroupID = found.releaseGroupID.flatMap { $0 == entry.album.releaseGroupID ? nil : $0.rawValue }
        }
        if entry.state == .cached {
            row.resolvedURL = entry.album.coverURL?.string ?? resolutions[id]?.url.string
            if let fresh = freshness.entry(id) {
                let validators = freshness.validators(id)
                row.checkedAt = fresh.checkedAt
                row.etag = validators.etag
                row.lastModified = validators.lastModified
            }
            // Outdated and not yet confirmed: `status` shows it, and a restart asks again at once.
            if freshness.outdated.contains(id) { row.refresh = .revalidate }
        }
        return row
    }
}

extension IndexRow {
    /// Whether the row is about the same job as `album`: the same record URL
    /// or, for an album to look up, the same ids, artist and title.
    func hasSameJob(as album: Album) -> Bool {
        if let url = album.coverURL { return coverURL == url.string }
        return coverURL == nil && releaseID == album.releaseID?.rawValue && releaseGroupID == album.releaseGroupID?.rawValue
            && artist == album.artist && title == album.title
    }
}

extension Resolution {
    /// What a looked-up row's lookup found; nil for a row that has no such record.
    init?(row: IndexRow) {
        guard let source = row.source, source != .url, let text = row.resolvedURL, let url = try? CoverURL(validating: text) else {
            return nil
        }
        self.init(
            url: url, source: source, releaseID: (row.foundReleaseID ?? row.releaseID).flatMap(MusicBrainzID.init),
            releaseGroupID: (row.foundReleaseGroupID ?? row.releaseGroupID).flatMap(MusicBrainzID.init))
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
