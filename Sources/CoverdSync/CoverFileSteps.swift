import CoverdBase
import CoverdCache
import CoverdFetch
import CoverdModel
import CoverdRecords
import Foundation

/// The planner's steps as the coordinator runs them against the cover
/// files: what a step needs looked at is looked at first, the planner
/// decides, and the step's file effects (removals, discarded temporaries)
/// are carried out in order; the other effects are returned for the
/// coordinator. `SyncPlanner` itself does no I/O: this is where its
/// decisions meet the disk, on the coordinator's queue (tests run it on
/// in-memory files).
struct CoverFileSteps<Files: CoverFiles> {
    let files: Files

    func update(_ albums: [Album], on planner: inout SyncPlanner, now: Date) -> [SyncEffect] {
        let checks = files.check(planner.coversToCheck(before: albums))
        let restored = files.restore(planner.keptToRestore(albums, now: now))
        return files.carryOut(planner.update(albums, checks: checks, restored: restored, now: now))
    }

    /// `coverd refresh`: erased covers' files go before their fetches start.
    func refresh(_ request: RefreshRequest, on planner: inout SyncPlanner, now: Date) -> (RefreshResult, [SyncEffect]) {
        let (result, effects) = planner.refresh(request, now: now)
        return (result, files.carryOut(effects))
    }

    /// The covers in `removed/` no row keeps (a crash came between a move and
    /// its row's change): one whose album is cached with no file in `covers/`
    /// goes back there, the others are deleted.
    func sweepKept(on planner: inout SyncPlanner) -> [SyncEffect] {
        for case .purgeKept(let id) in planner.orphanedKept(files.keptIDs()) {
            if planner.isCached(id), files.stamp(id) == nil, files.restoreKept(id) { continue }
            files.purgeKept(id)
        }
        return []
    }

    func withdraw(_ ids: [AlbumID], on planner: inout SyncPlanner, now: Date) -> [SyncEffect] {
        carryOutKeeping(planner.withdraw(ids, now: now), on: &planner)
    }

    func scanCompleted(_ scan: RecordScanCompleted, on planner: inout SyncPlanner, now: Date) -> [SyncEffect] {
        let checks = files.check(planner.coversToCheck(beforeCompleting: scan))
        return carryOutKeeping(planner.scanCompleted(scan, checks: checks, now: now), on: &planner)
    }

    func recordsRemoved(_ paths: [String], on planner: inout SyncPlanner, now: Date) -> [SyncEffect] {
        carryOutKeeping(planner.recordsRemoved(paths, now: now), on: &planner)
    }

    /// Carries out a step that may keep covers aside; one that could not be
    /// kept (deleted instead) is no longer kept in the planner, its row or its message.
    private func carryOutKeeping(_ effects: [SyncEffect], on planner: inout SyncPlanner) -> [SyncEffect] {
        var unkept: [AlbumID] = []
        let rest = files.carryOut(effects, unkept: &unkept)
        return unkept.isEmpty ? rest : planner.keepsFailed(Set(unkept), in: rest)
    }

    /// Staging ended: on success, the temporaries the planner still wants
    /// are renamed into place (in id order), and the planner told how each went.
    func staged(
        _ fetchID: FetchID, job key: JobKey, result: Result<StagedCovers, StagingFailure>, on planner: inout SyncPlanner, now: Date
    ) -> [SyncEffect] {
        let staged: StagedCovers
        switch result {
        case .failure(let failure): return files.carryOut(planner.stagingFailed(fetchID, job: key, failure: failure, now: now))
        case .success(let covers): staged = covers
        }
        var renamed: [AlbumID: Result<FileStamp, SystemError>] = [:]
        var unchanged: Set<AlbumID> = []
        let revalidation = planner.isRevalidation(fetchID, job: key)
        for (id, temporary) in planner.temporariesToCommit(fetchID, job: key, staged: staged).sorted(by: { $0.key < $1.key }) {
            // A server without validators sends the same cover again: the file is left alone, as after a 304.
            if revalidation, files.holdsSameBytes(temporary, as: id) {
                unchanged.insert(id)
                continue
            }
            do throws(SystemError) {
                renamed[id] = .success(try files.commit(temporary, as: id))
            } catch {
                renamed[id] = .failure(error)
            }
        }
        return files.carryOut(planner.committed(fetchID, job: key, staged: staged, renamed: renamed, unchanged: unchanged, now: now))
    }

    /// `staged` for a URL's job.
    func staged(
        _ fetchID: FetchID, url: CoverURL, result: Result<StagedCovers, StagingFailure>, on planner: inout SyncPlanner, now: Date
    ) -> [SyncEffect] {
        staged(fetchID, job: .url(url), result: result, on: &planner, now: now)
    }

    /// Waiting jobs whose time has come, with the room the disk has now
    /// (measured only when one of them waits for room).
    func timerFired(on planner: inout SyncPlanner, now: Date) -> [SyncEffect] {
        let space = planner.needsFreeSpace(now: now) ? files.freeSpace() : nil
        return files.carryOut(planner.timerFired(now: now, space: space))
    }

    /// Verdicts reached off the coordinator's queue, confirmed here: one
    /// stands if its file still has the stamp it was read with (one `stat`);
    /// a file that changed since is checked on the disk once more.
    func settleChecked(
        _ ids: [AlbumID], verdicts: [CoverVerdict], flagged: Set<AlbumID> = [], on planner: inout SyncPlanner, now: Date
    ) -> (effects: [SyncEffect], lost: Int) {
        precondition(ids.count == verdicts.count, "\(ids.count) albums with \(verdicts.count) verdicts")
        let checks = zip(ids, verdicts).map { id, verdict -> CachedFileCheck? in
            guard planner.isCached(id) else { return nil }
            if files.stamp(id) == verdict.stamp { return verdict.check }
            return files.check(id, expected: flagged.contains(id) ? nil : planner.cachedRow(id, now: now))
        }
        let settled = planner.settleChecked(ids, checks: checks, flagged: flagged, now: now)
        return (files.carryOut(settled.effects), settled.lost)
    }
}
