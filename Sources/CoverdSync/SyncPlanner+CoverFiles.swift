import CoverdBase
import CoverdCache
import CoverdFetch
import CoverdModel
import CoverdRecords
import Foundation

/// The planner's steps as the coordinator runs them against the cover files:
/// what a step needs looked at is looked at first, the planner decides, and
/// the step's file effects (removals, discarded temporaries) are carried out
/// in order; the other effects are returned for the coordinator. The
/// planner's own methods do no I/O; these are where it meets the disk, on
/// the coordinator's queue (tests run them on in-memory files).
extension SyncPlanner {
    public mutating func update(_ albums: [Album], now: Date, files: some CoverFiles) -> [SyncEffect] {
        let checks = files.check(coversToCheck(before: albums))
        return files.carryOut(update(albums, checks: checks, now: now))
    }

    public mutating func withdraw(_ ids: [AlbumID], files: some CoverFiles) -> [SyncEffect] {
        files.carryOut(withdraw(ids))
    }

    public mutating func scanCompleted(_ scan: RecordScanCompleted, now: Date, files: some CoverFiles) -> [SyncEffect] {
        let checks = files.check(coversToCheck(beforeCompleting: scan))
        return files.carryOut(scanCompleted(scan, checks: checks, now: now))
    }

    public mutating func recordsRemoved(_ paths: [String], files: some CoverFiles) -> [SyncEffect] {
        files.carryOut(recordsRemoved(paths))
    }

    /// Staging ended: on success, the temporaries the planner still wants
    /// are renamed into place (in id order), and the planner told how each went.
    package mutating func staged(
        _ fetchID: FetchID, job key: JobKey, result: Result<StagedCovers, StagingFailure>, now: Date, files: some CoverFiles
    ) -> [SyncEffect] {
        let staged: StagedCovers
        switch result {
        case .failure(let failure): return files.carryOut(stagingFailed(fetchID, job: key, failure: failure, now: now))
        case .success(let covers): staged = covers
        }
        var renamed: [AlbumID: Result<FileStamp, SystemError>] = [:]
        for (id, temporary) in temporariesToCommit(fetchID, job: key, staged: staged).sorted(by: { $0.key < $1.key }) {
            do throws(SystemError) {
                renamed[id] = .success(try files.commit(temporary, as: id))
            } catch {
                renamed[id] = .failure(error)
            }
        }
        return files.carryOut(committed(fetchID, job: key, staged: staged, renamed: renamed, now: now))
    }

    /// `staged` for a URL's job.
    public mutating func staged(
        _ fetchID: FetchID, url: CoverURL, result: Result<StagedCovers, StagingFailure>, now: Date, files: some CoverFiles
    ) -> [SyncEffect] {
        staged(fetchID, job: .url(url), result: result, now: now, files: files)
    }

    /// Waiting jobs whose time has come, with the room the disk has now.
    public mutating func timerFired(now: Date, files: some CoverFiles) -> [SyncEffect] {
        files.carryOut(timerFired(now: now, space: files.freeSpace()))
    }

    /// Verdicts reached off the coordinator's queue, confirmed here: one
    /// stands if its file still has the stamp it was read with (one `stat`);
    /// a file that changed since is checked on the disk once more.
    public mutating func settleChecked(
        _ ids: [AlbumID], verdicts: [CoverVerdict], flagged: Set<AlbumID> = [], now: Date, files: some CoverFiles
    ) -> (effects: [SyncEffect], lost: Int) {
        precondition(ids.count == verdicts.count, "\(ids.count) albums with \(verdicts.count) verdicts")
        let checks = zip(ids, verdicts).map { id, verdict -> CachedFileCheck? in
            guard let row = cachedRow(id, now: now) else { return nil }
            return files.stamp(id) == verdict.stamp ? verdict.check : files.check(id, expected: flagged.contains(id) ? nil : row)
        }
        let settled = settleChecked(ids, checks: checks, flagged: flagged, now: now)
        return (files.carryOut(settled.effects), settled.lost)
    }
}
