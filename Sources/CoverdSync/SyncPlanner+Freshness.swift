import CoverdBase
import CoverdCache
import CoverdFetch
import CoverdModel
import Foundation

/// Freshness (contract §8): cached covers revalidated once outdated, with
/// their validators; a `304` confirms them, a new body replaces them through
/// the usual staging and rename, and any failure leaves them cached as they
/// are, to be tried again with backoff. At most `revalidationSlots` run at
/// once, so new albums' downloads never wait behind a pass over the library.
extension SyncPlanner {
    /// Revalidations in flight at once; the fetcher's queue is first come, first served.
    static let revalidationSlots = 4

    /// `id`'s cover is cached as of `checkedAt` with `validators`: due again after `freshness.max_age`.
    mutating func noteCached(_ id: AlbumID, checkedAt: Date, validators: Validators) {
        freshness.confirm(id, at: checkedAt, validators: validators, unit: random())
    }

    /// Whether a revalidation runs, or one is due by `dueBy`.
    mutating func hasRevalidationWork(dueBy: Date) -> Bool {
        !revalidations.isEmpty || (freshness.nextDue().map { $0 <= dueBy } ?? false)
    }

    /// When the next revalidation may start, if one is due and a slot is free.
    mutating func nextRevalidation() -> Date? {
        revalidations.count < Self.revalidationSlots ? freshness.nextDue() : nil
    }

    /// Starts the revalidations due by `now`, as slots allow: each takes
    /// every cached album of its job along, so a cover shared by many albums
    /// is asked once.
    mutating func startDueRevalidations(now: Date) -> [SyncEffect] {
        var effects: [SyncEffect] = []
        while revalidations.count < Self.revalidationSlots, let id = freshness.takeDue(now: now) {
            guard let entry = tracked[id], entry.state == .cached, freshness.entry(id) != nil else {
                freshness.forget(id)
                continue
            }
            let key = JobKey(entry.album)
            effects.append(.index(.upsert(row(for: id, now: now))))
            if var running = revalidations[key] {
                if running.staging {
                    // Too late to share its answer: asked again once that one is in.
                    freshness.postpone(id, until: now.addingTimeInterval(1))
                } else {
                    running.albums.insert(id)
                    revalidations[key] = running
                }
                continue
            }
            guard let url = key.url ?? resolutions[id]?.url else {
                // A looked-up cover whose find was lost cannot be asked again; it waits as long as a failed cover does.
                freshness.postpone(id, until: now.addingTimeInterval(policy.failedInterval.seconds))
                continue
            }
            let albums = Set(tracked.cachedCopies(of: key)).union([id])
            let fetchID = newAttemptID()
            let validators = freshness.validators(id)
            var revalidation = Revalidation(fetchID: fetchID, url: url, albums: albums)
            revalidation.asked = validators
            revalidations[key] = revalidation
            effects.append(.revalidate(fetchID, key, url, validators))
        }
        return effects
    }

    /// A revalidation's request ended: a 304 confirms its albums, a body is
    /// staged to replace their files, a failure leaves them as they are.
    mutating func revalidationFinished(_ fetchID: FetchID, job key: JobKey, outcome: FetchOutcome, now: Date) -> [SyncEffect] {
        guard var running = revalidations[key], running.fetchID == fetchID, !running.staging else { return [] }
        let albums = stillCached(running.albums, of: key)
        switch outcome {
        case .notModified(let answer):
            revalidations[key] = nil
            var effects: [SyncEffect] = []
            for id in albums {
                guard freshness.entry(id) != nil, let entry = tracked[id] else { continue }
                // A sibling with other validators has other bytes (its rename failed once, say): asked on its own.
                guard freshness.validators(id) == running.asked else {
                    freshness.ask(id, now: now)
                    continue
                }
                noteCached(id, checkedAt: now, validators: merged(freshness.validators(id), answer.validators))
                effects.append(.index(.upsert(row(for: id, now: now))))
                effects.append(.post(CoverRevalidated(album: entry.album, path: paths.path(for: id), url: running.url, duration: answer.duration)))
            }
            return effects
        case .success(let body):
            guard !albums.isEmpty else {
                revalidations[key] = nil
                return []
            }
            running.staging = true
            running.validators = body.validators
            running.albums = Set(albums)
            revalidations[key] = running
            return [.stage(StageRequest(fetchID: fetchID, job: key, url: running.url, source: .download(body), albums: albums))]
        case .failure(let failure):
            revalidations[key] = nil
            if failure.kind == .cancelled {
                for id in albums { freshness.postpone(id, until: now.addingTimeInterval(1)) }
                return []
            }
            return revalidationFailed(albums, url: running.url, attempt: FailedAttempt(failure), now: now)
        }
    }

    /// Whether staging `fetchID` for `key` is a revalidation's new body.
    func isRevalidation(_ fetchID: FetchID, job key: JobKey) -> Bool {
        revalidations[key].map { $0.fetchID == fetchID && $0.staging } ?? false
    }

    /// A revalidation's staged files to rename over the old ones: those of albums still cached with this job.
    func revalidationTemporaries(_ fetchID: FetchID, job key: JobKey, staged: StagedCovers) -> [AlbumID: TemporaryCover] {
        guard let running = revalidations[key], running.fetchID == fetchID else { return [:] }
        let wanted = Set(stillCached(running.albums, of: key))
        return staged.temporaries.filter { wanted.contains($0.key) }
    }

    /// The new body is in place for the albums renamed; one whose rename
    /// failed keeps its old file and tries again later; one whose file already
    /// held these bytes (`unchanged`) is confirmed as by a 304, its file untouched.
    mutating func revalidationCommitted(
        _ fetchID: FetchID, job key: JobKey, staged: StagedCovers, renamed: [AlbumID: Result<FileStamp, SystemError>],
        unchanged: Set<AlbumID> = [], now: Date
    ) -> [SyncEffect] {
        var effects: [SyncEffect] = []
        for (id, temporary) in staged.temporaries.sorted(by: { $0.key < $1.key }) where renamed[id] == nil {
            effects.append(.discard(temporary))
        }
        guard let running = revalidations.removeValue(forKey: key), running.fetchID == fetchID else { return effects }
        for id in unchanged.sorted() {
            guard let entry = tracked[id] else { continue }
            noteCached(id, checkedAt: now, validators: running.validators)
            effects.append(.index(.upsert(row(for: id, now: now))))
            effects.append(.post(CoverRevalidated(album: entry.album, path: paths.path(for: id), url: running.url, duration: staged.duration)))
        }
        var unstored: [AlbumID] = []
        var failure: SystemError?
        for (id, outcome) in renamed.sorted(by: { $0.key < $1.key }) {
            guard var entry = tracked[id] else { continue }
            switch outcome {
            case .failure(let error):
                failure = error
                unstored.append(id)
            case .success(let stamp):
                entry.stamp = stamp
                entry.httpStatus = staged.httpStatus
                tracked.put(entry)
                noteCached(id, checkedAt: now, validators: running.validators)
                effects.append(.index(.upsert(row(for: id, now: now))))
                let found = resolutions[id]
                var cached = CoverCached(
                    album: entry.album, path: paths.path(for: id), url: running.url, source: found?.source ?? .url,
                    releaseID: found?.releaseID, releaseGroupID: found?.releaseGroupID, bytes: staged.bytes,
                    httpStatus: staged.httpStatus, duration: staged.duration)
                cached.revalidated = true
                effects.append(.post(cached))
            }
        }
        if let failure {
            effects += revalidationFailed(unstored, url: running.url, attempt: FailedAttempt(.storage(failure, bytes: staged.bytes)), now: now)
        }
        return effects
    }

    /// The new body could not be staged (not an image, a full disk): the old covers stay.
    mutating func revalidationStagingFailed(_ fetchID: FetchID, job key: JobKey, failure: StagingFailure, now: Date) -> [SyncEffect] {
        guard let running = revalidations[key], running.fetchID == fetchID else { return [] }
        revalidations[key] = nil
        return revalidationFailed(stillCached(running.albums, of: key), url: running.url, attempt: FailedAttempt(failure), now: now)
    }

    /// `coverd refresh`: unknown ids change nothing; a cached cover is
    /// revalidated now, or (`erase`) deleted and fetched anew without
    /// validators; an album not cached is tried again now.
    mutating func refresh(_ request: RefreshRequest, now: Date) -> (RefreshResult, [SyncEffect]) {
        let unknown = request.ids.filter { tracked[$0] == nil }
        guard unknown.isEmpty else { return (.unknown(unknown), []) }
        let ids = request.all ? tracked.ids { _ in true }.sorted() : Array(Set(request.ids)).sorted()
        var effects: [SyncEffect] = []
        for id in ids { refresh(id, mark: request.mark, now: now, effects: &effects) }
        effects += startDueRevalidations(now: now)
        return (.refreshed(count: ids.count), effects)
    }

    /// One album's refresh (from `coverd refresh`, or a mark the index kept from while no daemon ran).
    mutating func refresh(_ id: AlbumID, mark: RefreshMark, now: Date, effects: inout [SyncEffect]) {
        guard var entry = tracked[id] else { return }
        let key = JobKey(entry.album)
        guard entry.state == .cached else {
            retryNow(key, now: now, effects: &effects)
            return
        }
        switch mark {
        case .revalidate:
            freshness.ask(id, now: now)
            effects.append(.index(.upsert(row(for: id, now: now))))
        case .erase:
            freshness.forget(id)
            revalidations[key]?.albums.remove(id)
            effects.append(.removeCover(id))
            entry.stamp = nil
            tracked.setState(&entry, .pending)
            tracked.put(entry)
            resolutions[id] = nil
            attach(id, to: key, now: now, retryWaiting: true, copyingCachedCopies: false, effects: &effects)
            effects.append(.index(.upsert(row(for: id, now: now))))
        }
    }

    /// Of `ids`, the albums still tracked, cached, and on job `key`, sorted.
    private func stillCached(_ ids: Set<AlbumID>, of key: JobKey) -> [AlbumID] {
        ids.filter { id in tracked[id].map { $0.state == .cached && JobKey($0.album) == key } ?? false }.sorted()
    }

    /// Validators a 304 brought replace the old ones; those it left out stay.
    private func merged(_ old: Validators, _ new: Validators) -> Validators {
        Validators(etag: new.etag ?? old.etag, lastModified: new.lastModified ?? old.lastModified)
    }

    /// The albums keep their covers, outdated; asked again as a download
    /// that failed so would be: a permanent failure after `failedInterval`,
    /// a server's `Retry-After` within reason, else the usual backoff.
    private mutating func revalidationFailed(_ ids: [AlbumID], url: CoverURL, attempt: FailedAttempt, now: Date) -> [SyncEffect] {
        var effects: [SyncEffect] = []
        let reason = attempt.message, httpStatus = attempt.httpStatus
        for id in ids {
            guard let entry = tracked[id], let fresh = freshness.entry(id) else { continue }
            let delay: Duration
            if attempt.permanent {
                delay = policy.failedInterval
            } else if let retryAfter = attempt.retryAfter {
                delay = min(max(retryAfter, policy.initialDelay / 2), policy.failedInterval)
            } else {
                let backoff = Backoff(policy: policy).delay(attempt: Int(fresh.failures) + 1, unit: random())
                delay = attempt.storage ? min(backoff, policy.storageMaxDelay) : backoff
            }
            let retryAt = now.addingTimeInterval(delay.seconds)
            freshness.failed(id, retryAt: retryAt)
            effects.append(.index(.upsert(row(for: id, now: now))))
            effects.append(.post(RevalidationFailed(album: entry.album, url: url, reason: reason, httpStatus: httpStatus, retryAt: retryAt)))
        }
        return effects
    }
}
