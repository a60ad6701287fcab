import Dispatch
import Synchronization
import CoverdBase

/// Sends `WATCHDOG=1` at half the interval systemd asked for, but only after
/// every work loop answered a probe since the last ping: the ping travels
/// through the loops, so a hung loop (or a stopped process) stops the pings
/// and systemd restarts the service. The timer alone never pings.
public final class Watchdog: Sendable {
    private let notifier: any ReadinessNotifying
    private let probes: [any LivenessProbing]
    private let period: Duration
    private let queue = DispatchQueue(label: "coverd.watchdog")
    private let outstanding = Mutex(0)
    private let timer: Mutex<QueueTimer?> = Mutex(nil)

    /// `nil` when systemd did not enable the watchdog, or there is no loop to vouch for.
    public init?(notifier: any ReadinessNotifying, probes: [any LivenessProbing]) {
        guard let interval = notifier.watchdogInterval, !probes.isEmpty else { return nil }
        self.notifier = notifier
        self.probes = probes
        period = interval / 2
    }

    public var pingPeriod: Duration { period }

    public func start() {
        let timer = QueueTimer(queue: queue) { [weak self] in self?.tick() }
        timer.repeating(every: period)
        self.timer.withLock { $0 = timer }
        tick()
    }

    public func stop() {
        timer.withLock { $0?.cancel() }
    }

    private func tick() {
        let start = outstanding.withLock { count -> Bool in
            guard count == 0 else { return false }  // A loop has not answered the last probe: no ping.
            count = probes.count
            return true
        }
        guard start else { return }
        for probe in probes {
            probe.probe { [weak self] in self?.answered() }
        }
    }

    private func answered() {
        let all = outstanding.withLock { count -> Bool in
            count -= 1
            return count == 0
        }
        if all { notifier.notify([("WATCHDOG", "1")]) }
    }
}
