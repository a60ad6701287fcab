import Dispatch
import Synchronization
import CoverdBase
import CoverdModel

/// The connections following the daemon's progress (`status --follow`): each
/// gets the current line when it joins, then one per change of the summary,
/// at most one every `interval` while covers are pending (as systemd's
/// STATUS=), at once when nothing is pending any more or a note changes.
///
/// Threading: every method runs on the server's queue, and so does its timer.
final class ProgressFollowers: Sendable {
    private let interval: Duration
    private let state = Mutex(State())
    private let timer: Mutex<QueueTimer?> = Mutex(nil)

    private struct State {
        var summary = SyncSummary()
        /// "starting" until the daemon is ready, "reloading" during a reload.
        var note: String? = "starting"
        var followers: [ObjectIdentifier: ControlConnection] = [:]
        var pacing = ProgressPacing()
        var sentLine: String?
    }

    init(queue: DispatchQueue, interval: Duration) {
        self.interval = interval
        let trailing = QueueTimer(queue: queue) { [weak self] in self?.timerFired() }
        timer.withLock { $0 = trailing }
    }

    var current: FollowUpdate {
        state.withLock { FollowUpdate(summary: $0.summary, note: $0.note) }
    }

    var count: Int { state.withLock { $0.followers.count } }

    func add(_ connection: ControlConnection) {
        let update = state.withLock { state in
            state.followers[ObjectIdentifier(connection)] = connection
            return FollowUpdate(summary: state.summary, note: state.note)
        }
        connection.send(.progress(update))
    }

    func remove(_ connection: ControlConnection) {
        _ = state.withLock { $0.followers.removeValue(forKey: ObjectIdentifier(connection)) }
    }

    func progress(_ summary: SyncSummary) {
        let now = ContinuousClock.now
        let wait: Duration? = state.withLock { state in
            state.summary = summary
            return state.pacing.decide(busy: summary.isBusy, now: now, interval: interval)
        }
        switch wait {
        case .zero?: broadcast()
        case let delay?: timer.withLock { $0?.arm(after: delay) }
        case nil: break
        }
    }

    func lifecycle(_ phase: LifecycleChanged.Phase) {
        state.withLock { state in
            switch phase {
            case .started: state.note = "starting"
            case .ready: state.note = nil
            case .reloading: state.note = "reloading"
            case .stopping: state.note = "stopping"
            }
        }
        broadcast()
    }

    /// Tells every follower the daemon stops, and lets them go.
    func stopAll() {
        timer.withLock { $0?.cancel() }
        let followers = state.withLock { state in
            defer { state.followers = [:] }
            return Array(state.followers.values)
        }
        for follower in followers { follower.abandon(with: .stopping) }
    }

    private func timerFired() {
        state.withLock { $0.pacing.armed = false }
        broadcast()
    }

    private func broadcast() {
        let now = ContinuousClock.now
        let (update, followers) = state.withLock { state -> (FollowUpdate?, [ControlConnection]) in
            let update = FollowUpdate(summary: state.summary, note: state.note)
            guard update.line != state.sentLine else { return (nil, []) }
            state.sentLine = update.line
            state.pacing.lastSent = now
            return (update, Array(state.followers.values))
        }
        guard let update else { return }
        for follower in followers { follower.send(.progress(update)) }
    }
}
