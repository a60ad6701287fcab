import CSystemd
import Foundation

/// Tells a service manager how the daemon is doing (sd_notify's protocol).
public protocol ReadinessNotifying: Sendable {
    /// Sends `KEY=VALUE` assignments in one datagram; returns the errno when the
    /// manager asked for notifications and sending failed.
    @discardableResult
    func notify(_ assignments: [(key: String, value: String)]) -> Int32?
    /// The watchdog interval the manager expects (WATCHDOG_USEC), if any.
    var watchdogInterval: Duration? { get }
}

/// `ReadinessNotifying` through libsystemd's `sd_notify`; without
/// `NOTIFY_SOCKET` every call does nothing, as sd_notify does.
public struct SystemdNotifier: ReadinessNotifying {
    public init() {}

    @discardableResult
    public func notify(_ assignments: [(key: String, value: String)]) -> Int32? {
        // Newlines separate assignments, so a value may not contain one.
        let text = assignments.map { "\($0.key)=\($0.value.replacingOccurrences(of: "\n", with: " "))" }.joined(separator: "\n")
        let result = sd_notify(0, text)
        return result < 0 ? -result : nil
    }

    public var watchdogInterval: Duration? {
        var microseconds: UInt64 = 0
        guard sd_watchdog_enabled(0, &microseconds) > 0, microseconds > 0 else { return nil }
        return .microseconds(Int64(clamping: microseconds))
    }

    /// CLOCK_MONOTONIC in microseconds, for `MONOTONIC_USEC=` with `RELOADING=1`.
    public static func monotonicMicroseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
    }
}
