import Dispatch
import Synchronization
import CoverdBase
import CoverdModel

/// Posts `SyncProgress` when the summary changed: at once when nothing is
/// pending or the last post is old enough, otherwise from a trailing timer.
/// Thousands of covers a second would otherwise mean thousands of posts, and
/// as many `STATUS=` lines.
///
/// Threading: `offer` is called on the coordinator's queue after each planner
/// step, and the trailing timer fires on that queue too; the lock only keeps
/// the type honestly `Sendable`.
final class ProgressThrottle: Sendable {
    private let bus: EventBus
    private let interval: Duration
    private let state = Mutex(State())
    private let timer: Mutex<QueueTimer?> = Mutex(nil)

    private struct State {
        /// The summary last offered, which the trailing timer posts.
        var latest: SyncSummary?
        /// What observers were last told, and when.
        var posted: SyncSummary?
        var postedAt: ContinuousClock.Instant?
        var armed = false
    }

    init(bus: EventBus, queue: DispatchQueue, interval: Duration = .milliseconds(100)) {
        self.bus = bus
        self.interval = interval
        let trailing = QueueTimer(queue: queue) { [weak self] in self?.fire() }
        timer.withLock { $0 = trailing }
    }

    /// The summary after a planner step: posted now, later, or not at all if unchanged.
    func offer(_ summary: SyncSummary) {
        let now = ContinuousClock.now
        let (post, wait) = state.withLock { state -> (SyncSummary?, Duration?) in
            state.latest = summary
            guard summary != state.posted else { return (nil, nil) }
            let elapsed = state.postedAt.map { now - $0 } ?? interval
            if !summary.isBusy || elapsed >= interval {
                state.posted = summary
                state.postedAt = now
                return (summary, nil)
            }
            guard !state.armed else { return (nil, nil) }
            state.armed = true
            return (nil, interval - elapsed)
        }
        if let post { bus.post(SyncProgress(summary: post)) }
        if let wait { timer.withLock { $0?.arm(after: wait) } }
    }

    /// Stops the trailing timer for good.
    func cancel() {
        timer.withLock { $0?.cancel() }
    }

    private func fire() {
        let latest = state.withLock { state -> SyncSummary? in
            state.armed = false
            return state.latest
        }
        if let latest { offer(latest) }
    }
}
