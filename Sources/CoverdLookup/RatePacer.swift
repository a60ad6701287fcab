/// Paces the requests to one rate-limited origin, process-wide: one at a
/// time, `RateSchedule`'s interval apart, in the order they asked.
/// MusicBrainz allows about one request a second from a whole client,
/// however many albums wait, and refuses beyond it.
///
/// Threading: an actor. Waiting requests are continuations in a FIFO, let go
/// one per turn by a single timer task; one whose task is cancelled leaves
/// the queue at once and takes no turn, so withdrawn albums leave no gaps.
actor RatePacer {
    private struct Waiter {
        let number: UInt64
        let continuation: CheckedContinuation<Void, any Error>
    }

    private let clock = ContinuousClock()
    private var schedule: RateSchedule<ContinuousClock.Instant>
    private var waiters: [Waiter] = []
    private var numbered: UInt64 = 0
    private var timerArmed = false
    /// The longest pause an origin's `Retry-After` can ask for, as with every retry (contract §4).
    static let longestPause: Duration = .seconds(3600)

    /// MusicBrainz's pace: a tenth over its second, so that two requests never
    /// reach it within one however the network spaces them on the way.
    init(interval: Duration = .milliseconds(1100)) {
        schedule = RateSchedule(interval: interval, start: clock.now)
    }

    /// The earliest the next request may go (tests look at how a pause moved it).
    var nextTurn: ContinuousClock.Instant { schedule.next }
    /// How many requests wait for their turn.
    var waiting: Int { waiters.count }

    /// Returns when this request may go; throws `CancellationError` when its task is cancelled meanwhile.
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

    /// The origin refused a request for its rate: nothing goes for `duration`
    /// (at least a second, at most `longestPause`: a hostile `Retry-After` cannot stall every lookup).
    func pause(for duration: Duration?) {
        let clamped = min(max(duration ?? .seconds(1), .seconds(1)), Self.longestPause)
        schedule.pause(until: clock.now.advanced(by: clamped))
    }

    private func withdraw(_ number: UInt64) {
        guard let position = waiters.firstIndex(where: { $0.number == number }) else { return }
        waiters.remove(at: position).continuation.resume(throwing: CancellationError())
    }

    private func letDueGo() {
        let now = clock.now
        if !waiters.isEmpty, schedule.allows(now) {
            schedule.sent(at: now)
            waiters.removeFirst().continuation.resume()
        }
        guard !waiters.isEmpty, !timerArmed else { return }
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
