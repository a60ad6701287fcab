/// When requests to a rate-limited origin may go: one at a time, at least
/// `interval` apart, and none before a pause the origin asked for ends. Pure
/// arithmetic on instants, so tests drive it with their own times.
struct RateSchedule<Instant: InstantProtocol> where Instant.Duration == Duration {
    let interval: Duration
    /// The earliest instant the next request may go.
    private(set) var next: Instant

    /// Starts as though a request had just gone at `start`: a process that
    /// restarts (`Restart=on-failure`) soon after its last request keeps the
    /// spacing across the restart.
    init(interval: Duration, start: Instant) {
        self.interval = interval
        next = start.advanced(by: interval)
    }

    /// Whether a request may go at `now`.
    func allows(_ now: Instant) -> Bool {
        next <= now
    }

    /// A request went at `now`.
    mutating func sent(at now: Instant) {
        next = max(next, now.advanced(by: interval))
    }

    /// The origin refused a request for its rate (a 503): none goes before `until`.
    mutating func pause(until: Instant) {
        next = max(next, until)
    }
}
