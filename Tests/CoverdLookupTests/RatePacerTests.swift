@testable import CoverdLookup
import Testing

/// The turns requests took, in the order they took them.
private actor Turns {
    var taken: [(number: Int, at: ContinuousClock.Instant)] = []
    func took(_ number: Int) { taken.append((number, ContinuousClock.now)) }
}

@Suite("Rate pacer")
struct RatePacerTests {
    /// Waits for `condition`, polling, until `deadline` has passed.
    func eventually(within deadline: Duration = .seconds(20), _ condition: () async -> Bool) async -> Bool {
        let clock = ContinuousClock()
        let end = clock.now.advanced(by: deadline)
        while clock.now < end {
            if await condition() { return true }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return await condition()
    }

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

    @Test("Given a Retry-After of months, when paused, then the pause is held to an hour")
    func hostilePauseIsClamped() async {
        let pacer = RatePacer(interval: .milliseconds(10))
        let before = ContinuousClock.now
        await pacer.pause(for: .seconds(9_999_999))
        let resumes = await pacer.nextTurn
        #expect(resumes - before <= RatePacer.longestPause + .seconds(1))
        #expect(resumes - before >= RatePacer.longestPause - .seconds(1))
    }

    @Test("Given a pause, when a request asks during it, then it goes only after the pause")
    func pauseDelaysTheNextTurn() async throws {
        let pacer = RatePacer(interval: .milliseconds(10))
        let paused = ContinuousClock.now
        await pacer.pause(for: .seconds(1))
        try await pacer.turn()
        #expect(ContinuousClock.now - paused >= .seconds(1))
    }
}
