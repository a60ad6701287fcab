/// Paces the requests to one rate-limited origin, process-wide: each waits
/// for its turn (`RateSchedule`), in the order they asked. MusicBrainz asks
/// for about one request a second from a whole client, however many albums
/// wait and whatever the concurrency, and refuses beyond it.
///
/// Threading: an actor; a waiting request gives the actor up while it
/// sleeps, so later requests reserve the turns after it meanwhile. One whose
/// turn comes while the origin has asked for a pause queues again behind it.
public actor RatePacer {
    private var schedule: RateSchedule<ContinuousClock.Instant>
    private var pausedUntil: ContinuousClock.Instant?
    private let clock = ContinuousClock()

    public init(interval: Duration = .seconds(1), burst: Int = 2) {
        schedule = RateSchedule(interval: interval, burst: burst)
    }

    /// Returns when this request may go; throws `CancellationError` when its task is cancelled meanwhile.
    public func turn() async throws {
        while true {
            let at = schedule.reserve(now: clock.now)
            if at > clock.now { try await clock.sleep(until: at) }
            guard let until = pausedUntil, until > clock.now else { return }
        }
    }

    /// The origin refused a request for its rate: nothing goes for `duration`.
    public func pause(for duration: Duration) {
        let until = clock.now.advanced(by: duration)
        pausedUntil = pausedUntil.map { max($0, until) } ?? until
        schedule.pause(until: until)
    }
}
