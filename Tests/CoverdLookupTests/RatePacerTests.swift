@testable import CoverdLookup
import CoverdTestSupport
import Testing

/// The turns requests took, in the order they took them.
private actor Turns {
    var taken: [(number: Int, at: ContinuousClock.Instant)] = []
    func took(_ number: Int) { taken.append((number, ContinuousClock.now)) }
}

@Suite("Rate pacer")
struct RatePacerTests {
    @Test("Given five requests asking at once of a new pacer, when paced, then they go in the order they asked, the last no sooner than five intervals on")
    func inOrderAnIntervalApart() async throws {
        let created = ContinuousClock.now
        let pacer = RatePacer(interval: .milliseconds(40))
        let turns = Turns()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for number in 0..<5 {
                group.addTask {
                    try await pacer.turn()
                    await turns.took(number)
                    await pacer.finished(.answered)
                }
                // Each asks once the one before has joined the queue or had its turn.
                #expect(await eventually { await pacer.waiting + turns.taken.count == number + 1 })
            }
            try await group.waitForAll()
        }
        let taken = await turns.taken
        #expect(taken.map(\.number) == [0, 1, 2, 3, 4])
        // The first waits a full interval (as though one had just gone), each of the others one more.
        #expect(taken[4].at - created >= .milliseconds(200))
    }

    @Test("Given a waiting request whose task is cancelled, then it ends with CancellationError and leaves the queue, taking no turn")
    func cancelledWaiterLeaves() async {
        let pacer = RatePacer(interval: .seconds(3600))
        let waiter = Task { try await pacer.turn() }
        #expect(await eventually { await pacer.waiting == 1 })
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        #expect(await pacer.waiting == 0)
    }

    @Test("Given a task cancelled before it asks, when it asks for a turn, then it throws at once and never queues")
    func cancelledBeforeAsking() async {
        let pacer = RatePacer(interval: .seconds(3600))
        let waiter = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await pacer.turn()
        }
        await #expect(throws: CancellationError.self) { try await waiter.value }
        #expect(await pacer.waiting == 0)
    }

    @Test("Given a Retry-After of months, when a request is refused, then every request is held back an hour, no more")
    func hostilePauseIsClamped() async throws {
        let pacer = RatePacer(interval: .milliseconds(10))
        try await pacer.turn()
        let refused = ContinuousClock.now

        // When
        await pacer.finished(.refused(retryAfter: .seconds(9_999_999)))

        // Then
        let resumes = await pacer.nextTurn
        #expect(resumes - refused <= RatePacer.longestPause + .seconds(1))
        #expect(resumes - refused >= RatePacer.longestPause - .seconds(1))
    }

    @Test("Given a request refused with Retry-After: 1, when the next asks at once, then it goes only after the pause")
    func refusalDelaysTheNextTurn() async throws {
        let pacer = RatePacer(interval: .milliseconds(10))
        try await pacer.turn()
        let refused = ContinuousClock.now

        // When
        await pacer.finished(.refused(retryAfter: .seconds(1)))
        try await pacer.turn()

        // Then
        #expect(ContinuousClock.now - refused >= .seconds(1))
    }

    @Test("Given refusals in a row without a Retry-After, then each pauses twice as long as the one before, within an hour, and an answer starts again at a second")
    func refusalsBackOffExponentially() {
        #expect(RatePacer.pause(refusalsInARow: 1, retryAfter: nil) == .seconds(1))
        #expect(RatePacer.pause(refusalsInARow: 2, retryAfter: nil) == .seconds(2))
        #expect(RatePacer.pause(refusalsInARow: 4, retryAfter: nil) == .seconds(8))
        #expect(RatePacer.pause(refusalsInARow: 40, retryAfter: nil) == RatePacer.longestPause)
        #expect(RatePacer.pause(refusalsInARow: 3, retryAfter: .seconds(30)) == .seconds(30))
        #expect(RatePacer.pause(refusalsInARow: 1, retryAfter: .zero) == .seconds(1))
    }

    @Test("Given a request in flight, when the next one's interval has passed, then it still goes only once the first has finished")
    func oneInFlightAtATime() async throws {
        let pacer = RatePacer(interval: .milliseconds(10))
        let turns = Turns()
        try await pacer.turn()
        let second = Task {
            try await pacer.turn()
            await turns.took(2)
        }
        #expect(await eventually { await pacer.waiting == 1 })
        // Past the second's turn by the interval alone; a third asking now makes the pacer look at
        // its queue at once, where one that ignored the first request would let the second go.
        let due = await pacer.nextTurn
        #expect(await eventually { ContinuousClock.now >= due })
        let third = Task { try await pacer.turn() }
        #expect(await eventually { await pacer.waiting == 2 })
        #expect(await turns.taken.isEmpty)

        // When
        await pacer.finished(.answered)

        // Then
        try await second.value
        #expect(await turns.taken.map(\.number) == [2])
        third.cancel()
        _ = try? await third.value  // It was only there to make the pacer look; cancelled, it ends with CancellationError.
    }

    @Test("Given three requests waiting behind one in flight, when the middle one is cancelled, then the others go in their order and the cancelled one never does")
    func cancellingAMiddleWaiterKeepsTheOrder() async throws {
        let pacer = RatePacer(interval: .milliseconds(10))
        let turns = Turns()
        try await pacer.turn()
        var waiters: [Task<Void, any Error>] = []
        for number in 1...3 {
            waiters.append(Task {
                try await pacer.turn()
                await turns.took(number)
                await pacer.finished(.answered)
            })
            #expect(await eventually { await pacer.waiting == number })
        }

        // When
        waiters[1].cancel()
        #expect(await eventually { await pacer.waiting == 2 })
        await pacer.finished(.answered)

        // Then
        try await waiters[0].value
        try await waiters[2].value
        await #expect(throws: CancellationError.self) { try await waiters[1].value }
        #expect(await turns.taken.map(\.number) == [1, 3])
    }
}
