/// Paces the requests to one rate-limited origin, process-wide: one in
/// flight at a time, each let go at least `RateSchedule`'s interval after
/// the one before went out, in the order they asked. MusicBrainz allows
/// about one request a second from a whole client, however many albums
/// wait, and refuses beyond it. The daemon builds one `CoverLookup`, so one
/// pacer (a shared global would be the singleton the house rules forbid).
///
/// Threading: an actor. Waiting requests are continuations in a FIFO, let go
/// one per turn by a single timer task. One whose task is cancelled while it
/// waits leaves the queue and takes no turn; every turn taken is ended by
/// `finished`, which lets the next one go.
actor RatePacer {
    private struct Waiter {
        let number: UInt64
        let continuation: CheckedContinuation<Void, any Error>
    }

    /// How a request that had its turn ended.
    enum Ending: Sendable, Equatable {
        /// The origin answered (any answer but a refusal).
        case answered
        /// The origin refused it for its rate (503, 429), perhaps saying for how long.
        case refused(retryAfter: Duration?)
        /// No answer came (a connection error, a timeout, a cancellation).
        case unanswered
    }

    private let clock = ContinuousClock()
    private var schedule: RateSchedule<ContinuousClock.Instant>
    private var waiters: [Waiter] = []
    private var numbered: UInt64 = 0
    private var inFlight = false
    private var timerArmed = false
    /// Refusals in a row: without a Retry-After, each pauses twice as long as the last.
    private var refusals = 0
    /// The longest pause an origin's refusal can cause, as with every retry (contract §4).
    static let longestPause: Duration = .seconds(3600)

    /// MusicBrainz's pace: a tenth over its second, a margin for the network's
    /// jitter between a request going out here and arriving there.
    init(interval: Duration = .milliseconds(1100)) {
        schedule = RateSchedule(interval: interval, start: clock.now)
    }

    /// The earliest the next request may go (tests look at how a pause moved it).
    var nextTurn: ContinuousClock.Instant { schedule.next }
    /// How many requests wait for their turn.
    var waiting: Int { waiters.count }

    /// Returns when this request may go; the caller then calls `finished` once
    /// it has its answer. Throws `CancellationError` (and takes no turn) when
    /// its task is cancelled meanwhile.
    func turn() async throws {
        numbered += 1
        let number = numbered
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                guard !Task.isCancelled else { return continuation.resume(throwing: CancellationError()) }
                waiters.append(Waiter(number: number, continuation: continuation))
                letDueGo()
            }
        } onCancel: {
            Task { await self.withdraw(number) }
        }
    }

    /// The request whose turn it was has ended. The next goes at least an
    /// interval after this one went out (`requestSent`: after name lookup,
    /// connection and TLS, which may have held it back from its turn), so the
    /// origin sees them that far apart. A refusal pauses every request: for
    /// its `Retry-After` if it gave one, else for a second, doubling with
    /// each refusal in a row, always within `longestPause`.
    func finished(_ ending: Ending, requestSent: ContinuousClock.Instant? = nil) {
        precondition(inFlight, "a request finished that had no turn")
        inFlight = false
        if let requestSent { schedule.sent(at: min(requestSent, clock.now)) }
        switch ending {
        case .answered:
            refusals = 0
        case .refused(let retryAfter):
            refusals += 1
            schedule.pause(until: clock.now.advanced(by: Self.pause(refusalsInARow: refusals, retryAfter: retryAfter)))
        case .unanswered:
            break
        }
        letDueGo()
    }

    /// How long every request waits after a refusal: the origin's `Retry-After`,
    /// else a second doubled for each refusal in a row before this one; at
    /// least a second, at most `longestPause`.
    static func pause(refusalsInARow refusals: Int, retryAfter: Duration?) -> Duration {
        let backoff = Duration.seconds(1) * (1 << min(max(refusals - 1, 0), 12))
        return min(max(retryAfter ?? backoff, .seconds(1)), longestPause)
    }

    private func withdraw(_ number: UInt64) {
        guard let position = waiters.firstIndex(where: { $0.number == number }) else { return }
        waiters.remove(at: position).continuation.resume(throwing: CancellationError())
    }

    private func letDueGo() {
        guard !inFlight, !waiters.isEmpty else { return }
        let now = clock.now
        if schedule.allows(now) {
            schedule.sent(at: now)
            inFlight = true
            waiters.removeFirst().continuation.resume()
            return
        }
        guard !timerArmed else { return }
        timerArmed = true
        let due = schedule.next
        Task {
            // Sleeping only ends early when cancelled, and this task never is.
            try? await clock.sleep(until: due)
            self.timerFired()
        }
    }

    private func timerFired() {
        timerArmed = false
        letDueGo()
    }
}
