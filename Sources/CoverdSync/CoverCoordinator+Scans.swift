import Dispatch
import CoverdBase
import CoverdModel
import CoverdRecords

/// What follows a scan of the records: after the first, a look at the covers
/// it took as cached on the index's word; after a reload's, at every cached
/// cover (flagged ones by `coverd verify` read in full), both off the
/// coordinator's queue, settled on it.
extension CoverCoordinator {
    func scanCompleted(_ message: RecordScanCompleted) {
        run { planner, steps, now in steps.scanCompleted(message, on: &planner, now: now) }
        if message.reason == .startup {
            // Kept covers no row keeps (a crash came between a move into removed/ and its row's
            // change, and the album is in the records after all) are deleted once the scan is settled.
            run { planner, steps, _ in steps.sweepKept(on: &planner) }
            answerHeldRefreshes()
            let ids = state.withLock { $0.planner.takeUnchecked() }
            return checkCachedCovers(ids, flagged: [], by: cachedCovers, announced: true)
        }
        guard message.reason == .reload else { return }
        // `coverd verify` marks corrupt covers in the index; a reload acts on its marks.
        let flagged: Set<AlbumID>
        writer.flush()
        do {
            flagged = try index.uncachedIDs()
        } catch {
            bus.post(OperationFailed(operation: "read the index for reload", error: error.description))
            flagged = []
        }
        var cached: [AlbumID] = []
        run { planner, _, now in
            let reload = planner.retryAll(now: now)
            cached = reload.cached
            return reload.effects
        }
        let check = CachedCoverCheck()
        state.withLock { state in
            state.reloadCheck?.cancel()  // On the queue: the newer check looks at every cover again.
            state.reloadCheck = check
        }
        checkCachedCovers(cached, flagged: flagged, by: check, announced: false)
    }

    /// Has `check` look at the files of `ids` off the queue and settle what
    /// it finds on it (`CachedCoverCheck`); `flagged` ones are read whatever
    /// their stamps. An `announced` check (the first scan's) is posted on the
    /// bus when it starts and when it is done, for the log and systemd's status.
    private func checkCachedCovers(_ ids: [AlbumID], flagged: Set<AlbumID>, by check: CachedCoverCheck, announced: Bool) {
        let coverFiles = state.withLock { files($0.settings) }
        let steps = CachedCoverCheck.Steps(
            differing: { [weak self] ids, found in
                self?.state.withLock { $0.planner.differing(ids, found: found, flagged: flagged) } ?? ([], 0)
            },
            settle: { [weak self] ids, verdicts in
                var lost = 0
                self?.run { planner, steps, now in
                    let settled = steps.settleChecked(ids, verdicts: verdicts, flagged: flagged, on: &planner, now: now)
                    lost = settled.lost
                    return settled.effects
                }
                return lost
            },
            finished: { [bus] compared, lost, duration in
                if announced { bus.post(CachedCoversChecked(compared: compared, lost: lost, duration: duration)) }
            })
        if announced && !ids.isEmpty { bus.post(CachedCoversCheckStarted(count: ids.count)) }
        check.start(ids, in: coverFiles, target: queue, steps: steps)
    }
}
