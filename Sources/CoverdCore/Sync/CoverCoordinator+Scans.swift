import Foundation

/// The coordinator's part in scans and reloads: the first scan's end starts
/// the check of the covers it believed cached; a reload acts on the marks
/// `coverd verify` left in the index and applies the new configuration.
extension CoverCoordinator {
    func scanCompleted(_ message: RecordScanCompleted) {
        run { planner, files, now in planner.scanCompleted(message, now: now, files: files) }
        if message.reason == .startup { checkBelievedCovers() }
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
        run { planner, files, now in
            let cached = flagged.filter { planner.tracked[$0]?.state == .cached }
            return planner.retryAll(now: now, files: files, flagged: cached)
        }
    }

    /// After the first scan: the covers it took as cached on the index's word are looked at (`CachedCoverAudit`).
    private func checkBelievedCovers() {
        let ids = state.withLock { $0.planner.takeUnchecked() }
        audit.start(ids, target: queue) { [weak self] ids, stamps in
            var lost = 0
            self?.run { planner, files, now in
                let checked = planner.checkCached(ids, stamps: stamps, now: now, files: files)
                lost = checked.lost
                return checked.effects
            }
            return lost
        } finished: { [bus] checked, lost, duration in
            bus.post(CachedCoversChecked(checked: checked, lost: lost, duration: duration))
        }
    }

    func reconfigure(_ configuration: Configuration) {
        do {
            try fetcher.apply(configuration.fetch)
        } catch {
            bus.post(OperationFailed(operation: "apply the new fetch settings", error: error.description))
        }
        state.withLock { state in
            state.configuration = configuration
            state.planner.policy = configuration.retry
        }
    }
}
