/// Paces the requests to one rate-limited origin, process-wide: each waits
/// for its turn (`RateSchedule`), in the order they asked. MusicBrainz asks
/// for about one request a second from a whole client, however many albums
/// wait and whatever the concurrency, and refuses beyond it.
///
/// Threading: an actor; a waiting request gives the actor up while it
/// sleeps, so later requests reserve the turns after it meanwhile.
public actor RatePacer {
    private var schedule: RateSchedule<ContinuousClock.Instant>
    private let clock = ContinuousClock()

    public init(interval: Duration = .seconds(1), burst: Int = 2) {
        schedule = RateSchedule(interval: interval, burst: burst)
    }

    /// Returns when this request may go; throws `CancellationError` when its task is cancelled meanwhile.
    public func turn() async throws {
        let at = schedule.reserve(now: clock.now)
        if at > clock.now { try await clock.sleep(until: at) }
    }

    /// The origin refused a request for its rate: nothing goes for `duration`.
    public func pause(for duration: Duration) {
        schedule.pause(until: clock.now.advanced(by: duration))
    }
}
