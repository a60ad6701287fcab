@testable import CoverdFetch
import Testing

/// The bytes of bodies in memory, and which transfers wait for room.
@Suite("Body budget")
struct BodyBudgetTests {
    @Test("Given two transfers and a budget of 100 bytes, when the younger's piece would pass it, then the younger is paused and the oldest still takes its bytes")
    func youngerPausedPastTheLimit() {
        // Given
        var budget = BodyBudget(limit: 100)
        budget.began(FetchID(1))
        budget.began(FetchID(2))
        let first = budget.take(60, for: FetchID(2))

        // When
        let younger = budget.take(60, for: FetchID(2))
        let oldest = budget.take(60, for: FetchID(1))

        // Then: the oldest may pass the limit while no delivered body waits
        #expect(first)
        #expect(!younger)
        #expect(oldest)
        #expect(budget.snapshot == BodyBudget.Snapshot(held: 0, receiving: 120, paused: 1))
        #expect(!budget.admitsMore)
    }

    @Test("Given a delivered body waiting to be consumed, when the oldest transfer's piece would pass the limit, then it is paused too")
    func oldestPausedWhileABodyWaits() {
        // Given
        var budget = BodyBudget(limit: 100)
        budget.began(FetchID(1))
        budget.began(FetchID(2))
        let delivered = budget.take(70, for: FetchID(1))
        budget.ended(FetchID(1), delivered: true)

        // When
        let taken = budget.take(40, for: FetchID(2))
        let resumed = budget.toResume()

        // Then: the waiting body's consumption is the progress; 30 bytes of room do not take the piece of 40
        #expect(delivered)
        #expect(!taken)
        #expect(resumed == [], "no room for its piece, and a body waits")
        #expect(budget.snapshot == BodyBudget.Snapshot(held: 70, receiving: 0, paused: 1))
    }

    @Test("Given paused transfers, when the waiting body is consumed, then they are resumed oldest first, as many as the room takes the piece each was refused")
    func resumedOldestFirstAsRoomAllows() {
        // Given: 1 delivered (90 bytes held); 4, 2 and 3 paused, in that order
        var budget = BodyBudget(limit: 100)
        for id in 1...4 { budget.began(FetchID(UInt64(id))) }
        let delivered = budget.take(90, for: FetchID(1))
        budget.ended(FetchID(1), delivered: true)
        let refused = [4, 2, 3].map { budget.take(40, for: FetchID(UInt64($0))) }

        // When
        budget.consumed(90)
        let resumed = budget.toResume()

        // Then: room for 100 bytes takes two pieces of 40, the oldest two
        #expect(delivered)
        #expect(refused == [false, false, false])
        #expect(resumed == [FetchID(2), FetchID(3)])
        #expect(budget.snapshot.paused == 1)
        #expect(budget.admitsMore)
    }

    @Test("Given the oldest transfer past the limit and a younger one paused, when the oldest fails, then its bytes are dropped and the younger is resumed")
    func failedTransferFreesItsBytes() {
        // Given: 1 takes more than the whole budget; 2 paused
        var budget = BodyBudget(limit: 100)
        budget.began(FetchID(1))
        budget.began(FetchID(2))
        let oldest = budget.take(150, for: FetchID(1))
        let younger = budget.take(10, for: FetchID(2))
        let before = budget.toResume()

        // When
        budget.ended(FetchID(1), delivered: false)
        let after = budget.toResume()

        // Then
        #expect(oldest)
        #expect(!younger)
        #expect(before == [], "no room, and 2 is not the oldest")
        #expect(budget.total == 0)
        #expect(after == [FetchID(2)])
    }

    @Test("Given a body held, when consumed with more bytes than were held, then the budget does not go below zero")
    func consumptionNeverGoesNegative() {
        // Given
        var budget = BodyBudget(limit: 100)
        budget.began(FetchID(1))
        let taken = budget.take(30, for: FetchID(1))
        budget.ended(FetchID(1), delivered: true)

        // When
        budget.consumed(50)

        // Then
        #expect(taken)
        #expect(budget.total == 0)
    }

    @Test("Given a transfer the budget does not count (an answer), when it takes bytes, then it is never paused and counts for nothing")
    func uncountedTransfersPass() {
        // Given
        var budget = BodyBudget(limit: 10)

        // When
        let taken = budget.take(1_000, for: FetchID(9))

        // Then
        #expect(taken)
        #expect(budget.total == 0)
    }
}
