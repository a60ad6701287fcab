@testable import CoverdLookup
import Testing

@Suite("Rate schedule")
struct RateScheduleTests {
    let start = ContinuousClock.now

    func seconds(_ instant: ContinuousClock.Instant) -> Double {
        let elapsed = instant - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    @Test("Given many requests asked for at once, when scheduled at one a second with a burst of two, then no three fall within one second and they average one a second")
    func burstThenOneASecond() {
        var schedule = RateSchedule<ContinuousClock.Instant>(interval: .seconds(1), burst: 2)
        let times = (0..<10).map { _ in seconds(schedule.reserve(now: start)) }
        for index in 2..<times.count {
            #expect(times[index] - times[index - 2] > 1.0, "\(times)")
        }
        #expect(times[0] == 0 && times[1] < 1)
        #expect(abs(times[9] - 8.1) < 0.001, "\(times)")
    }

    @Test("Given a quiet spell, when requests come again, then the burst is available again but never three in one second")
    func burstRefillsAfterQuiet() {
        var schedule = RateSchedule<ContinuousClock.Instant>(interval: .seconds(1), burst: 2)
        _ = schedule.reserve(now: start)
        let later = start.advanced(by: .seconds(10))
        let a = seconds(schedule.reserve(now: later)), b = seconds(schedule.reserve(now: later)), c = seconds(schedule.reserve(now: later))
        #expect(a == 10 && b < 11 && c - a > 1.0, "\([a, b, c])")
    }

    @Test("Given a refusal (503), when paused, then nothing goes before the pause ends, and no burst right after it")
    func pauseHoldsEveryone() {
        var schedule = RateSchedule<ContinuousClock.Instant>(interval: .seconds(1), burst: 2)
        _ = schedule.reserve(now: start)
        schedule.pause(until: start.advanced(by: .seconds(5)))
        let a = seconds(schedule.reserve(now: start)), b = seconds(schedule.reserve(now: start))
        #expect(a >= 5 && b - a >= 1.0, "\([a, b])")
    }
}
