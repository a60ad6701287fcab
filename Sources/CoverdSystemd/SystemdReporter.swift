import Dispatch
import Foundation
import Synchronization
import CoverdBase
import CoverdModel
import CoverdSync

/// Reports the daemon's life to systemd, by observing the bus: `READY=1`,
/// `RELOADING=1` with `MONOTONIC_USEC=`, `STOPPING=1`, and a `STATUS=` line
/// that always begins with the contract's summary
/// (`<N> albums: <C> cached, <P> pending, <F> failed`).
///
/// While albums wait for a lookup the line goes on "; N waiting for a
/// lookup"; while the covers taken as cached at start-up are being looked
/// at, it ends "; checking N cached covers" (a lifecycle note such as
/// "stopping" takes its place).
///
/// Progress is coalesced: while covers are pending, STATUS= goes out at most
/// about once a second; when nothing is pending any more it goes out at once,
/// and so do the check's start and end.
public final class SystemdReporter: Sendable {
    private let notifier: any ReadinessNotifying
    private let bus: EventBus
    private let queue = DispatchQueue(label: "coverd.systemd")
    private let state = Mutex(State())
    private let interval: Duration
    private let tokens: Mutex<[ObservationToken]> = Mutex([])
    private let timer: Mutex<QueueTimer?> = Mutex(nil)

    private struct State {
        var summary = SyncSummary()
        var note: String? = "starting"
        /// How many cached covers the check after the first scan is looking at; nil when none is running.
        var checking: Int?
        var pacing = ProgressPacing()
        var sentLine: String?
        var reportedFailure = false
    }

    public init(notifier: any ReadinessNotifying, bus: EventBus, interval: Duration = .seconds(1)) {
        self.notifier = notifier
        self.bus = bus
        self.interval = interval
    }

    public func start() {
        let timer = QueueTimer(queue: queue) { [weak self] in self?.timerFired() }
        self.timer.withLock { $0 = timer }
        let observations = [
            bus.observe(LifecycleChanged.self, on: queue) { [weak self] in self?.lifecycle($0.phase) },
            bus.observe(SyncProgress.self, on: queue) { [weak self] in self?.progress($0.summary) },
            bus.observe(CachedCoversCheckStarted.self, on: queue) { [weak self] in self?.checking($0.count) },
            bus.observe(CachedCoversChecked.self, on: queue) { [weak self] _ in self?.checking(nil) },
        ]
        tokens.withLock { $0 = observations }
    }

    /// Waits until every message observed so far has been reported.
    public func flush() {
        queue.sync {}
    }

    private func lifecycle(_ phase: LifecycleChanged.Phase) {
        let assignments: [(key: String, value: String)] = state.withLock { state in
            switch phase {
            case .started:
                state.note = "starting"
                return [("STATUS", line(state))]
            case .ready:
                state.note = nil
                return [("READY", "1"), ("STATUS", line(state))]
            case .reloading:
                state.note = "reloading"
                return [("RELOADING", "1"), ("MONOTONIC_USEC", String(SystemdNotifier.monotonicMicroseconds())), ("STATUS", line(state))]
            case .stopping:
                state.note = "stopping"
                return [("STOPPING", "1"), ("STATUS", line(state))]
            }
        }
        send(assignments)
    }

    private func progress(_ summary: SyncSummary) {
        let now = ContinuousClock.now
        let delay: Duration? = state.withLock { state in
            state.summary = summary
            return state.pacing.decide(busy: summary.isBusy, now: now, interval: interval)
        }
        switch delay {
        case .zero?: sendStatus()
        case let wait?: timer.withLock { $0?.arm(after: wait) }
        case nil: break
        }
    }

    private func checking(_ count: Int?) {
        state.withLock { $0.checking = count }
        sendStatus()
    }

    private func timerFired() {
        state.withLock { $0.pacing.armed = false }
        sendStatus()
    }

    private func sendStatus() {
        let text: String? = state.withLock { state in
            let text = line(state)
            return text == state.sentLine ? nil : text
        }
        if let text { send([("STATUS", text)]) }
    }

    private func line(_ state: State) -> String {
        let note = state.note ?? state.checking.map { "checking \($0) cached covers" }
        // Lookups wait for MusicBrainz's rate, one album a second: a large library says how many are left.
        let lookups = state.summary.awaitingLookup > 0 ? "; \(state.summary.awaitingLookup) waiting for a lookup" : ""
        return state.summary.line + lookups + (note.map { "; \($0)" } ?? "")
    }

    private func send(_ assignments: [(key: String, value: String)]) {
        let failure = notifier.notify(assignments)
        let first = state.withLock { state -> Bool in
            state.pacing.lastSent = ContinuousClock.now
            if let status = assignments.first(where: { $0.key == "STATUS" }) { state.sentLine = status.value }
            defer { if failure != nil { state.reportedFailure = true } }
            return failure != nil && !state.reportedFailure
        }
        if first, let failure {
            bus.post(OperationFailed(
                operation: "notify systemd (NOTIFY_SOCKET)",
                error: "sd_notify: \(SystemError.describe(failure)); further failures are not logged"))
        }
    }
}
