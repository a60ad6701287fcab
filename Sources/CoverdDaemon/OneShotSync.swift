import Dispatch
import Foundation
import Synchronization
import CoverdBase
import CoverdConfig
import CoverdFetch
import CoverdModel
import CoverdSync

/// `coverd sync`: the daemon's engine (`DaemonParts`: the cache's lock,
/// index, fetcher, lookups, coordinator, watcher), run in the foreground
/// until no album is pending, then stopped as SIGTERM stops the daemon (no
/// temporary file left). No systemd: no readiness, no watchdog, no reload.
///
/// Done means: the first scan decided on, the cached covers it took on the
/// index's word looked at (`CachedCoversChecked`), and every pending album
/// given up by `SyncPatience` (none pending at all, usually). Albums failed
/// in an earlier run stay failed until their next try is due, as they would
/// in the daemon; a changed record retries at once.
///
/// Threading: `run` blocks its caller. Progress is looked at on a queue of
/// its own every `tick`, which hands `progress` the summary; SIGINT, SIGTERM
/// and SIGHUP stop the sync from the signal queue.
public final class OneShotSync: Sendable {
    private let configuration: Configuration
    private let bus: EventBus
    private let progress: @Sendable (SyncSummary) -> Void
    private let queue = DispatchQueue(label: "coverd.sync")
    private let ended = DispatchSemaphore(value: 0)
    private let state: Mutex<State>
    /// How often progress is looked at (and shown, at most).
    static let tick: Duration = .milliseconds(100)
    /// How often, at most, the walk of every album for failures is made while some are pending.
    static let failureLook: Duration = .milliseconds(500)

    private struct State {
        var patience: SyncPatience
        var givenUp: Set<AlbumID> = []
        var checkRunning = false
        var lastFailureLook: ContinuousClock.Instant?
        var signal: Int32?
        var ended = false
        /// When this sync started: the revalidations it waits for are those due by then.
        var startedAt = Date()
        /// When nothing was pending any more but revalidations still ran; they are waited for up to the patience limit.
        var revalidationWaitSince: ContinuousClock.Instant?
    }

    /// - Parameters:
    ///   - giveUpAfter: how long an album failing transiently is waited for (`SyncPatience`).
    ///   - progress: called with the summary on every tick, on the sync's queue.
    public init(
        configuration: Configuration, bus: EventBus, giveUpAfter: TimeInterval,
        progress: @escaping @Sendable (SyncSummary) -> Void
    ) {
        self.configuration = configuration
        self.bus = bus
        self.progress = progress
        state = Mutex(State(patience: SyncPatience(limit: giveUpAfter)))
    }

    /// Syncs until done or stopped by a signal; throws when the engine cannot
    /// start (`cacheInUse` when a daemon holds the cache: nothing was changed).
    public func run() throws(DaemonError) -> SyncOutcome {
        let began = ContinuousClock.now
        state.withLock { $0.startedAt = Date() }
        MallocSettings.apply()
        // Signals first: a Ctrl-C during a long first scan still stops cleanly.
        let signals = SignalWatcher()
        signals.on([SIGINT, SIGTERM, SIGHUP]) { [weak self] number in self?.end(signal: number) }
        defer { signals.cancel() }
        // Progress goes to standard output: piped into `head`, a closed pipe must fail a write, not kill the process mid-sync.
        signal(SIGPIPE, SIG_IGN)

        let config = configuration
        let curl = CurlFetcher.libcurlVersion.split(separator: " ").prefix(2).joined(separator: " ")
        bus.post(LifecycleChanged(.started, detail: "sync: records \(config.recordsDirectory), cache \(config.cacheDirectory), \(curl)"))
        let parts = try DaemonParts(configuration: config, bus: bus)
        // Observed before the scan, whose end starts the check of cached covers.
        let checks = [
            bus.observe(CachedCoversCheckStarted.self, on: queue) { [weak self] _ in
                self?.state.withLock { $0.checkRunning = true }
            },
            bus.observe(CachedCoversChecked.self, on: queue) { [weak self] _ in
                self?.state.withLock { $0.checkRunning = false }
            },
        ]
        parts.watcher.start()
        parts.coordinator.drain()
        parts.waitForLeftoverSweep()
        queue.sync {}  // The check's start, posted while the scan was decided on, is seen before the first tick.
        bus.post(LifecycleChanged(.ready, detail: "\(parts.watcher.albumCount) albums from \(config.recordsDirectory)"))

        let coordinator = parts.coordinator
        let timer = QueueTimer(queue: queue) { [weak self] in self?.look(at: coordinator) }
        timer.repeating(every: Self.tick)
        queue.async { [weak self] in self?.look(at: coordinator) }
        ended.wait()
        timer.cancel()
        queue.sync {}  // No look runs past here.
        checks.forEach { $0.cancel() }

        bus.post(LifecycleChanged(.stopping))
        parts.shutDown()
        let report = coordinator.failureReport()
        return state.withLock { state in
            SyncOutcome(
                summary: report.summary, failures: report.failures,
                givenUp: state.givenUp.intersection(report.failures.filter { $0.state == .pending }.map(\.album.id)),
                signal: state.signal, duration: ContinuousClock.now - began)
        }
    }

    /// One tick: progress shown, and whether the sync is done.
    private func look(at coordinator: CoverCoordinator) {
        dispatchPrecondition(condition: .onQueue(queue))
        let summary = coordinator.summary
        progress(summary)
        let now = ContinuousClock.now
        let due = state.withLock { state -> Bool in
            guard !state.ended, !state.checkRunning else { return false }
            if summary.pending == 0 { return true }
            return state.lastFailureLook.map { now - $0 >= Self.failureLook } ?? true
        }
        guard due else { return }
        if summary.pending == 0 {
            if revalidationsToWaitFor(coordinator, now: now) { return }
            return end(signal: nil)
        }
        let report = coordinator.failureReport()
        let done = state.withLock { state -> Bool in
            state.lastFailureLook = now
            state.givenUp = state.patience.givenUp(report.failures, now: Date())
            return report.summary.pending == 0 || report.summary.pending == state.givenUp.count
        }
        if done && !revalidationsToWaitFor(coordinator, now: now) {
            progress(report.summary)
            end(signal: nil)
        }
    }

    /// Whether to wait on for revalidations (contract §8): those due when the
    /// sync started are done before it ends, each tried once (a failure is
    /// retried later, by the next sync or the daemon), and for no longer than
    /// `--give-up-after` once nothing else is pending; what is left stays
    /// outdated, marked, for the next run.
    private func revalidationsToWaitFor(_ coordinator: CoverCoordinator, now: ContinuousClock.Instant) -> Bool {
        let (startedAt, since, limit) = state.withLock { state -> (Date, ContinuousClock.Instant, TimeInterval) in
            if state.revalidationWaitSince == nil { state.revalidationWaitSince = now }
            return (state.startedAt, state.revalidationWaitSince ?? now, state.patience.limit)
        }
        guard coordinator.revalidationsOutstanding(dueBy: startedAt) else { return false }
        return now - since < .milliseconds(Int64(limit * 1000))
    }

    /// Ends the wait in `run`, once: done (`signal` nil), or stopped by a signal.
    private func end(signal: Int32?) {
        let first = state.withLock { state -> Bool in
            guard !state.ended else { return false }
            state.ended = true
            state.signal = signal
            return true
        }
        if first { ended.signal() }
    }
}
