@testable import CoverdBase
import Testing

@Suite("Progress pacing")
struct ProgressPacingTests {
    let start = ContinuousClock.now
    let second = Duration.seconds(1)

    @Test("Given a line sent just now, when busy, then the next waits for the rest of the interval, once; when idle, it goes at once")
    func busyWaitsIdleDoesNot() {
        var pacing = ProgressPacing()
        #expect(pacing.decide(busy: true, now: start, interval: second) == .zero, "nothing sent yet")
        pacing.lastSent = start
        #expect(pacing.decide(busy: true, now: start + .milliseconds(300), interval: second) == .milliseconds(700))
        #expect(pacing.decide(busy: true, now: start + .milliseconds(400), interval: second) == nil, "a timer is armed")
        #expect(pacing.decide(busy: false, now: start + .milliseconds(500), interval: second) == .zero)
        pacing.armed = false
        #expect(pacing.decide(busy: true, now: start + .milliseconds(1500), interval: second) == .zero, "the last line is old enough")
    }
}
