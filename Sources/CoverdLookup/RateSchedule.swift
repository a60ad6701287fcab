/// When requests to a rate-limited origin may go: a generic cell rate
/// algorithm, at most one per `interval` on average and up to `burst` at
/// once. Pure arithmetic on instants, so tests drive it with their own times.
struct RateSchedule<Instant: InstantProtocol> where Instant.Duration == Duration {
    let interval: Duration
    /// How far ahead of its turn on the average a request may go. A tenth of
    /// an interval short of a full burst's worth, so that `burst + 1`
    /// requests never fall within one interval even when the network evens
    /// out their spacing on the way.
    let tolerance: Duration
    /// When the next request would go if requests kept exactly to the average.
    private var theoretical: Instant?

    init(interval: Duration, burst: Int) {
        self.interval = interval
        tolerance = interval * max(burst - 1, 0) - (burst > 1 ? interval / 10 : .zero)
    }

    /// Reserves the next turn for a request asked for at `now`; returns when it may go.
    mutating func reserve(now: Instant) -> Instant {
        let due = theoretical.map { max($0, now) } ?? now
        let send = max(now, due.advanced(by: .zero - tolerance))
        theoretical = max(due, send).advanced(by: interval)
        return send
    }

    /// No request before `until`, and no burst right after it (the origin refused one: a 503).
    mutating func pause(until: Instant) {
        let resumed = until.advanced(by: tolerance)
        theoretical = theoretical.map { max($0, resumed) } ?? resumed
    }
}
