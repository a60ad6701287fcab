/// When a progress line goes out (systemd's `STATUS=`, a follower's line):
/// at once when nothing is busy or the last line is at least `interval` old,
/// else once, from a timer, when it is; several changes meanwhile make one line.
package struct ProgressPacing: Sendable {
    /// When the last line went out.
    package var lastSent: ContinuousClock.Instant?
    /// A timer is armed to send the latest summary.
    package var armed = false

    package init() {}

    /// `.zero`: send now; another duration: arm a timer for it; nil: one is armed already.
    package mutating func decide(busy: Bool, now: ContinuousClock.Instant, interval: Duration) -> Duration? {
        guard busy, let last = lastSent, now - last < interval else { return .zero }
        if armed { return nil }
        armed = true
        return interval - (now - last)
    }
}
