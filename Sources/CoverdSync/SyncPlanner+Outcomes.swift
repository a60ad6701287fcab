import Foundation
import CoverdBase
import CoverdFetch
import CoverdModel

extension SyncPlanner {
    /// A download ended. Stale outcomes (a job cancelled or restarted since) are ignored.
    public mutating func fetchFinished(_ fetchID: FetchID, url: CoverURL, outcome: FetchOutcome, now: Date) -> [SyncEffect] {
        guard var job = jobs[url], job.phase == .fetching(fetchID) else { return [] }
        switch outcome {
        case .success(let body):
            job.phase = .storing(fetchID)
            jobs[url] = job
            return [.prepare(PrepareRequest(fetchID: fetchID, url: url, source: .download(body), albums: job.waiters.sorted()))]
        case .failure(let failure):
            if failure.kind == .cancelled { return [] }
            var effects: [SyncEffect] = []
            fail(url, message: failure.message, permanent: !failure.isTransient, retryAfter: failure.retryAfter,
                 httpStatus: failure.httpStatus, duration: failure.duration, storage: false, now: now, effects: &effects)
            return effects
        }
    }

    /// Temporary files were written for a download, or preparing it failed.
    /// Files are renamed into place only for albums that still want this URL.
    public mutating func prepared(
        _ fetchID: FetchID, url: CoverURL, result: Result<PreparedFiles, PrepareFailure>, now: Date, files: some CoverFiles
    ) -> [SyncEffect] {
        guard var job = jobs[url], job.phase == .storing(fetchID) else {
            if case .success(let prepared) = result { prepared.temporaries.values.forEach(files.discard) }
            return []
        }
        var effects: [SyncEffect] = []
        let prepared: PreparedFiles
        switch result {
        case .failure(.sourceUnavailable):
            // The other album's copy is gone or bad: download instead.
            let fetchID = newFetchID()
            job.waiters.formUnion(job.lateWaiters)
            job.lateWaiters = []
            job.phase = .fetching(fetchID)
            jobs[url] = job
            return [.fetch(fetchID, url)]
        case .failure(let failure):
            let permanent: Bool
            if case .image = failure { permanent = true } else { permanent = false }
            job.waiters.formUnion(job.lateWaiters)
            job.lateWaiters = []
            var outOfSpace = false
            if case .storage(let error, let bytes) = failure {
                job.storageBytes = bytes
                outOfSpace = error.isOutOfSpace
            }
            jobs[url] = job
            fail(url, message: failure.message, permanent: permanent, retryAfter: nil, httpStatus: nil,
                 duration: nil, storage: !permanent, outOfSpace: outOfSpace, now: now, effects: &effects)
            return effects
        case .success(let files):
            prepared = files
        }
        var unstored: Set<AlbumID> = job.lateWaiters
        var storageError: SystemError?
        for (id, temporary) in prepared.temporaries.sorted(by: { $0.key < $1.key }) {
            guard var entry = tracked[id], entry.album.coverURL == url, job.waiters.contains(id) else {
                files.discard(temporary)
                continue
            }
            do {
                entry.stamp = try files.commit(temporary, as: id)
            } catch {
                storageError = error
                unstored.insert(id)
                continue
            }
            entry.error = nil
            entry.attempts = 0
            entry.nextRetry = nil
            entry.httpStatus = prepared.httpStatus
            setState(&entry, .cached)
            tracked[id] = entry
            effects.append(.index(.upsert(row(for: id, now: now))))
            effects.append(.post(CoverCached(
                album: entry.album, path: files.path(for: id), bytes: prepared.bytes,
                httpStatus: prepared.httpStatus, duration: prepared.duration)))
        }
        // Waiters that got no file (they joined late, or a rename failed) go round again.
        unstored.formUnion(job.waiters.filter { prepared.temporaries[$0] == nil })
        jobs[url] = nil
        guard !unstored.isEmpty else { return effects }
        if let storageError {
            jobs[url] = CoverJob(url: url, waiters: unstored, phase: .storing(fetchID), attempts: job.attempts, storageBytes: prepared.bytes)
            fail(url, message: PrepareFailure.storage(storageError, bytes: prepared.bytes).message, permanent: false, retryAfter: nil,
                 httpStatus: nil, duration: nil, storage: true, outOfSpace: storageError.isOutOfSpace, now: now, effects: &effects)
        } else {
            for id in unstored.sorted() { attach(id, to: url, now: now, effects: &effects) }
        }
        return effects
    }

    /// Jobs whose retry time has come start again. One that failed for a
    /// full disk waits for the next look (`roomLook`, shared by all such
    /// jobs) while the cover would still not fit: downloading it again only
    /// to fail again would waste the network. Each look that finds no room
    /// posts one `CoversWaitingForRoom` and moves the waiting albums' next
    /// try in the index to the next look.
    public mutating func timerFired(now: Date, files: some CoverFiles) -> [SyncEffect] {
        var effects: [SyncEffect] = []
        var stillFull: [(CoverURL, CoverJob)] = []
        while let entry = retries.earliest, entry.due <= now {
            _ = retries.pop()
            guard var job = jobs[entry.url], case .waiting(_, let token) = job.phase, token == entry.token else { continue }
            if let bytes = job.storageBytes, !files.hasRoom(for: bytes) {
                stillFull.append((entry.url, job))
                continue
            }
            job.storageBytes = nil
            let fetchID = newFetchID()
            job.phase = .fetching(fetchID)
            jobs[entry.url] = job
            effects.append(.fetch(fetchID, entry.url))
        }
        let due = now.addingTimeInterval(policy.storageMaxDelay.seconds)
        if !stillFull.isEmpty {
            roomLook = due
            let largest = stillFull.compactMap { $0.1.storageBytes }.max() ?? 0
            effects.append(.post(CoversWaitingForRoom(count: stillFull.count, largestBytes: largest, retryAt: due)))
        }
        for (url, var job) in stillFull {
            let token = newToken()
            job.phase = .waiting(until: due, token: token)
            jobs[url] = job
            retries.push(RetryHeap.Entry(due: due, url: url, token: token))
            // `status` would otherwise show a next try already past while the disk stays full.
            for id in job.waiters.sorted() {
                guard var entry = tracked[id] else { continue }
                entry.nextRetry = due
                tracked[id] = entry
                effects.append(.index(.upsert(row(for: id, now: now))))
            }
        }
        return effects
    }

    /// Records a failed attempt for every album waiting on `url` and schedules the next one.
    private mutating func fail(
        _ url: CoverURL, message: String, permanent: Bool, retryAfter: Duration?, httpStatus: Int?,
        duration: Duration?, storage: Bool, outOfSpace: Bool = false, now: Date, effects: inout [SyncEffect]
    ) {
        guard var job = jobs[url] else { return }
        job.attempts += 1
        if !storage { job.storageBytes = nil }
        let delay: Duration
        if permanent {
            delay = policy.failedInterval
        } else if let retryAfter {
            // Honour the server, within reason: never sooner than half the first backoff, never beyond the failed interval.
            delay = min(max(retryAfter, policy.initialDelay / 2), policy.failedInterval)
        } else {
            let backoff = Backoff(policy: policy).delay(attempt: job.attempts, unit: random())
            delay = storage ? min(backoff, policy.storageMaxDelay) : backoff
        }
        var due = now.addingTimeInterval(delay.seconds)
        if outOfSpace {
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
        job.lastFailure = (message, permanent, httpStatus)
        jobs[url] = job
        retries.push(RetryHeap.Entry(due: due, url: url, token: token))
        for id in job.waiters.sorted() {
            guard var entry = tracked[id] else { continue }
            entry.error = message
            entry.attempts = job.attempts
            entry.nextRetry = due
            entry.httpStatus = httpStatus
            setState(&entry, permanent ? .failed : .pending)
            tracked[id] = entry
            effects.append(.index(.upsert(row(for: id, now: now))))
            effects.append(.post(CoverFailed(
                album: entry.album, reason: message, httpStatus: httpStatus, duration: duration,
                permanent: permanent, attempt: job.attempts, retryAt: due)))
        }
    }
}
