@testable import CoverdLookup
import Testing

@Suite("Rate schedule")
struct RateScheduleTests {
    let start = ContinuousClock.now

    func at(_ seconds: Double) -> ContinuousClock.Instant {
        start.advanced(by: .milliseconds(Int64(seconds * 1000)))
    }

    @Test("Given a new schedule, when asked at once, then no request may go before one interval has passed, as though one had just gone")
    func startsAsThoughOneHadJustGone() {
        let schedule = RateSchedule(interval: .seconds(1), start: start)
        #expect(!schedule.allows(start))
        #expect(!schedule.allows(at(0.999)))
        #expect(schedule.allows(at(1)))
    }

    @Test("Given requests sent whenever allowed, then each goes at least one interval after the one before")
    func oneAtATimeAnIntervalApart() {
        var schedule = RateSchedule(interval: .seconds(1), start: start)
        var sent: [ContinuousClock.Instant] = []
        var now = start
        while sent.count < 5 {
            if schedule.allows(now) {
                schedule.sent(at: now)
                sent.append(now)
            }
            now = now.advanced(by: .milliseconds(50))
        }
        for (earlier, later) in zip(sent, sent.dropFirst()) {
            #expect(later - earlier >= .seconds(1))
        }
    }

    @Test("Given a quiet spell, when a request comes, then it goes at once; and the next one still waits a full interval")
    func noBurstAfterQuiet() {
        var schedule = RateSchedule(interval: .seconds(1), start: start)
        schedule.sent(at: at(1))
        #expect(schedule.allows(at(10)))
        schedule.sent(at: at(10))
        #expect(!schedule.allows(at(10.5)))
        #expect(schedule.allows(at(11)))
    }

    @Test("Given a refusal (503), when paused, then nothing goes before the pause ends, and a shorter pause later does not shorten it")
    func pauseHoldsEveryone() {
        var schedule = RateSchedule(interval: .seconds(1), start: start)
        schedule.sent(at: at(1))
        schedule.pause(until: at(6))
        schedule.pause(until: at(3))
        #expect(!schedule.allows(at(5.9)))
        #expect(schedule.allows(at(6)))
    }
}
