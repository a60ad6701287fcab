import CoverdBase

/// Jittered exponential backoff: about `initialDelay` for the first retry,
/// doubling with each attempt, never above `maxDelay`.
///
/// The jitter (±25 %) spreads retries of many covers that failed together
/// (a server restart) so that they do not return in one burst.
public struct Backoff: Sendable {
    public var policy: RetryPolicy

    public init(policy: RetryPolicy) {
        self.policy = policy
    }

    /// The delay before retry number `attempt` (1 for the first retry).
    /// `unit` is a random number in 0..<1.
    public func delay(attempt: Int, unit: Double) -> Duration {
        let initial = policy.initialDelay.seconds
        let cap = policy.maxDelay.seconds
        let exponent = Double(min(max(attempt, 1) - 1, 62))
        let base = min(initial * pow2(exponent), cap)
        let jittered = base * (0.75 + 0.5 * min(max(unit, 0), 1))
        return .milliseconds(Int64((min(jittered, cap) * 1000).rounded()))
    }

    private func pow2(_ exponent: Double) -> Double {
        var value = 1.0
        for _ in 0..<Int(exponent) { value *= 2 }
        return value
    }
}
