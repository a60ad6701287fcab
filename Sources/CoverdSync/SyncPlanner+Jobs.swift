import Foundation
import CoverdModel

/// One job per URL, however many albums share it: albums join and leave
/// jobs here, and a job that nobody waits for is cancelled. The jobs'
/// outcomes are in `SyncPlanner+Outcomes.swift`.
extension SyncPlanner {
    /// Adds an album to its URL's job. With no job, another album's cached
    /// copy of the URL is used if there is one, else a fetch starts. A job
    /// waiting to retry starts at once when `retryWaiting` (the album's record
    /// changed); otherwise the album shares its last failure.
    mutating func attach(_ id: AlbumID, to url: CoverURL, now: Date, retryWaiting: Bool = false, effects: inout [SyncEffect]) {
        guard var job = jobs[url] else {
            let fetchID = newFetchID()
            if let sibling = cachedCopies(of: url).first(where: { $0 != id }) {
                jobs[url] = CoverJob(url: url, waiters: [id], phase: .storing(fetchID))
                effects.append(.prepare(PrepareRequest(fetchID: fetchID, url: url, source: .cachedCover(sibling), albums: [id])))
                return
            }
            jobs[url] = CoverJob(url: url, waiters: [id], phase: .fetching(fetchID))
            effects.append(.fetch(fetchID, url))
            return
        }
        switch job.phase {
        case .storing: job.lateWaiters.insert(id)
        case .fetching: job.waiters.insert(id)
        case .waiting:
            job.waiters.insert(id)
            jobs[url] = job
            if retryWaiting {
                retryNow(url, now: now, effects: &effects)
                return
            }
            if let failure = job.lastFailure, var entry = tracked[id] {
                entry.error = failure.message
                entry.attempts = job.attempts
                setState(&entry, failure.permanent ? .failed : .pending)
                tracked[id] = entry
            }
        }
        jobs[url] = job
    }

    /// Removes an album from its job; a job nobody waits for is cancelled.
    mutating func detach(_ id: AlbumID, from url: CoverURL, effects: inout [SyncEffect]) {
        guard var job = jobs[url] else { return }
        job.waiters.remove(id)
        job.lateWaiters.remove(id)
        guard job.waiters.isEmpty && job.lateWaiters.isEmpty else {
            jobs[url] = job
            return
        }
        jobs[url] = nil
        if case .fetching(let fetchID) = job.phase { effects.append(.cancelFetch(fetchID)) }
    }

    /// Starts a waiting job now (a changed record, a reload).
    mutating func retryNow(_ url: CoverURL, now: Date, effects: inout [SyncEffect]) {
        guard var job = jobs[url], case .waiting = job.phase else { return }
        let fetchID = newFetchID()
        job.phase = .fetching(fetchID)
        job.attempts = 0
        jobs[url] = job
        effects.append(.fetch(fetchID, url))
    }
}
