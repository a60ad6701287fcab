@testable import CoverdFetch
import Testing

/// The bytes of bodies in memory, and which transfers wait for room.
@Suite("Body budget")
struct BodyBudgetTests {
    @Test("Given a transfer whose bytes are all that is in memory, when it passes the limit, then it is granted, and another transfer is then paused")
    func aloneMayPassTheLimit() {
        // Given
        var budget = BodyBudget(limit: 100)
        budget.began(FetchID(1))
        budget.began(FetchID(2))
        let first = budget.take(60, for: FetchID(2))

        // When
        let alone = budget.take(60, for: FetchID(2))
        let other = budget.take(10, for: FetchID(1))

        // Then: memory is within the limit plus one body (this one, alone in memory)
        #expect(first)
        #expect(alone)
        #expect(!other)
        #expect(budget.snapshot == BodyBudget.Snapshot(held: 0, receiving: 120, paused: 1))
        #expect(!budget.admitsMore)
    }

    @Test("Given an older transfer waiting for room for a large grant, when a younger one asks for a small grant that would fit, then the younger waits its turn and no transfer starts")
    func firstComeFirstServed() {
        // Given: 50 held; 1 waits for 80
        var budget = BodyBudget(limit: 100)
        for id in 0...2 { budget.began(FetchID(UInt64(id))) }
        let delivered = budget.take(50, for: FetchID(0))
        budget.ended(FetchID(0), keeping: 50)
        let large = budget.take(80, for: FetchID(1))

        // When
        let small = budget.take(10, for: FetchID(2))
        let admits = budget.admitsMore
        budget.consumed(50)
        let resumed = budget.toResume()

        // Then
        #expect(delivered)
        #expect(!large)
        #expect(!small)
        #expect(!admits)
        #expect(resumed == [FetchID(1), FetchID(2)])
    }

    @Test("Given a delivered body waiting to be consumed, when the oldest transfer's piece would pass the limit, then it is paused too")
    func oldestPausedWhileABodyWaits() {
        // Given
        var budget = BodyBudget(limit: 100)
        budget.began(FetchID(1))
        budget.began(FetchID(2))
        let delivered = budget.take(70, for: FetchID(1))
        budget.ended(FetchID(1), keeping: 70)

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
        budget.ended(FetchID(1), keeping: 90)
        let refused = [4, 2, 3].map { budget.take(40, for: FetchID(UInt64($0))) }

        // When
        budget.consumed(90)
        let resumed = budget.toResume()

        // Then: room for 100 bytes takes two pieces of 40, the oldest two
        #expect(delivered)
        #expect(refused == [false, false, false])
        #expect(resumed == [FetchID(2), FetchID(3)])
        #expect(budget.snapshot.paused == 1)
        #expect(!budget.admitsMore, "4 still waits its turn")
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
        budget.ended(FetchID(1), keeping: nil)
        let after = budget.toResume()

        // Then
        #expect(oldest)
        #expect(!younger)
        #expect(before == [], "no room, and 2 is not the oldest")
        #expect(budget.total == 0)
        #expect(after == [FetchID(2)])
    }

    @Test("Given two bodies of unannounced length that together reach the limit, when each asks for more, then the oldest is granted past the limit and the younger waits: neither waits on the other for ever")
    func oldestFinishesWhenBodiesShareTheLimit() {
        // Given: 1 and 2 hold 40 each of 100; no body is held
        var budget = BodyBudget(limit: 100)
        budget.began(FetchID(1))
        budget.began(FetchID(2))
        let first = [budget.take(40, for: FetchID(1)), budget.take(40, for: FetchID(2))]

        // When
        let younger = budget.take(30, for: FetchID(2))
        let oldest = budget.take(30, for: FetchID(1))
        budget.ended(FetchID(1), keeping: 70)
        budget.consumed(70)
        let resumed = budget.toResume()

        // Then: memory passed the limit by the oldest body only, and the younger goes on once it is consumed
        #expect(first == [true, true])
        #expect(!younger)
        #expect(oldest)
        #expect(resumed == [FetchID(2)])
        #expect(budget.snapshot == BodyBudget.Snapshot(held: 0, receiving: 40, paused: 0))
    }

    @Test("Given the oldest transfer paused while a body was held, and the rest of the limit granted to a younger one, when the body is consumed, then the oldest is resumed")
    func pausedOldestResumedWhenBodiesShareTheLimit() {
        // Given: 3 delivered 20; 1 and 2 hold 40 each; 1 refused 30 while the 20 were held
        var budget = BodyBudget(limit: 100)
        for id in 1...3 { budget.began(FetchID(UInt64(id))) }
        _ = budget.take(20, for: FetchID(3))
        budget.ended(FetchID(3), keeping: 20)
        let first = [budget.take(40, for: FetchID(1)), budget.take(40, for: FetchID(2))]
        let whileHeld = budget.take(30, for: FetchID(1))

        // When
        budget.consumed(20)
        let resumed = budget.toResume()

        // Then
        #expect(first == [true, true])
        #expect(!whileHeld)
        let retaken = budget.take(30, for: FetchID(1))
        #expect(resumed == [FetchID(1)])
        #expect(retaken, "the resumed transfer takes the piece it was refused")
    }

    @Test("Given a younger transfer past the limit alone, when the oldest asks for bytes, then it waits: memory never holds two bodies past the limit")
    func oldestWaitsBehindABodyPastTheLimit() {
        // Given
        var budget = BodyBudget(limit: 100)
        budget.began(FetchID(1))
        budget.began(FetchID(2))
        let alone = budget.take(150, for: FetchID(2))

        // When
        let oldest = budget.take(10, for: FetchID(1))

        // Then
        #expect(alone)
        #expect(!oldest)
    }

    @Test("Given a younger transfer past the limit alone and the oldest paused behind it, when the younger asks for more, then it is granted, or resumed, though an older one waits: it is the one that can finish")
    func aloneGoesOnThoughAnOlderWaits() {
        // Given: 2 holds 150 of 100 alone; 1 asks for its first 10 and waits
        var budget = BodyBudget(limit: 100)
        budget.began(FetchID(1))
        budget.began(FetchID(2))
        let alone = budget.take(150, for: FetchID(2))
        let oldest = budget.take(10, for: FetchID(1))

        // When
        let more = budget.take(50, for: FetchID(2))
        budget.ended(FetchID(2), keeping: 200)
        budget.consumed(200)
        let resumed = budget.toResume()

        // Then
        #expect(alone)
        #expect(!oldest)
        #expect(more)
        #expect(resumed == [FetchID(1)])
    }

    @Test("Given a body announced longer than it arrived, when its transfer ends, then only the bytes delivered are held, and consuming them empties the budget")
    func shortBodyHoldsWhatArrived() {
        // Given: 1 announced 80 (granted whole), and 10 arrived
        var budget = BodyBudget(limit: 100)
        budget.began(FetchID(1))
        let granted = budget.take(80, for: FetchID(1))

        // When
        budget.ended(FetchID(1), keeping: 10)
        let held = budget.snapshot.held
        budget.consumed(10)

        // Then
        #expect(granted)
        #expect(held == 10)
        #expect(budget.total == 0)
        #expect(budget.admitsMore)
    }

    @Test("Given a body held, when consumed with more bytes than were held, then the budget does not go below zero")
    func consumptionNeverGoesNegative() {
        // Given
        var budget = BodyBudget(limit: 100)
        budget.began(FetchID(1))
        let taken = budget.take(30, for: FetchID(1))
        budget.ended(FetchID(1), keeping: 30)

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
