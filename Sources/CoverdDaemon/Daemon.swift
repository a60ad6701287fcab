import Dispatch
import Foundation
import Logging
import Synchronization
import CoverdBase
import CoverdConfig
import CoverdFetch
import CoverdLogging
import CoverdRecords
import CoverdSystemd

/// A start-up failure: what could not be done, and the errno behind it when there is one.
public struct DaemonError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public var errno: Int32?
    /// Another process (a daemon, or a sync) holds the cache's lock: `message` names its pid.
    public var cacheInUse: Bool

    public init(_ message: String, errno: Int32? = nil, cacheInUse: Bool = false) {
        self.message = message
        self.errno = errno
        self.cacheInUse = cacheInUse
    }

    public var description: String { message }

    /// A directory that cannot be made or written (read-only, forbidden, not a
    /// directory) is a problem with the configured paths: exit 78 (EX_CONFIG),
    /// which the unit does not restart in a loop.
    public var isAboutConfiguration: Bool {
        guard let errno else { return false }
        return errno == EROFS || errno == EACCES || errno == ENOTDIR || errno == EPERM
    }
}

/// The composition root of `coverd run`: builds every part, wires them to
/// one bus, and runs until SIGTERM or SIGINT.
///
/// Start order matters: the coordinator observes the bus before the watcher
/// scans, so no album posted by the first scan is missed; `ready` is posted
/// when the index is open, the records are scanned and the watch is armed,
/// without waiting for downloads.
public final class Daemon: Sendable {
    private let bus: EventBus
    private let notifier: any ReadinessNotifying
    private let logLevel: LogLevelSetting
    private let reloadConfiguration: @Sendable () throws(ConfigError) -> Configuration
    private let configuration: Mutex<Configuration>
    private let stopRequested = DispatchSemaphore(value: 0)
    private let stopping = Atomic<Bool>(false)
    /// The running parts once the daemon is ready (nil before, and from the
    /// stop on); a SIGHUP before the first scan finished is acted on once it is.
    private let readiness = Mutex<(parts: DaemonParts?, reloadPending: Bool)>((nil, false))

    /// - Parameter reloadConfiguration: re-reads the configuration on SIGHUP
    ///   (the same file and flags as at start).
    public init(
        configuration: Configuration, bus: EventBus, notifier: any ReadinessNotifying, logLevel: LogLevelSetting,
        reloadConfiguration: @escaping @Sendable () throws(ConfigError) -> Configuration
    ) {
        self.configuration = Mutex(configuration)
        self.bus = bus
        self.notifier = notifier
        self.logLevel = logLevel
        self.reloadConfiguration = reloadConfiguration
    }

    /// Runs until asked to stop; returns after a clean shutdown.
    public func run() throws(DaemonError) {
        MallocSettings.apply()
        // Signals first: a SIGTERM or SIGHUP during a long first scan must not kill the process.
        let signals = SignalWatcher()
        signals.on([SIGTERM, SIGINT]) { [weak self] _ in self?.requestStop() }
        signals.on([SIGHUP]) { [weak self] _ in self?.reload() }
        defer { signals.cancel() }

        let config = configuration.withLock { $0 }
        let curl = CurlFetcher.libcurlVersion.split(separator: " ").prefix(2).joined(separator: " ")
        bus.post(LifecycleChanged(.started, detail: "records \(config.recordsDirectory), cache \(config.cacheDirectory), \(curl)"))
        let parts = try DaemonParts(configuration: config, bus: bus)
        // Pings travel through every work loop; started before the first scan, which may take a while.
        let watchdog = Watchdog(notifier: notifier, probes: parts.probes)
        watchdog?.start()
        let bus = self.bus
        let readyAfterReload = bus.observe(RecordScanCompleted.self, on: DispatchQueue(label: "coverd.lifecycle")) { message in
            guard message.reason == .reload else { return }
            bus.post(LifecycleChanged(.ready, detail: "\(message.albumCount) albums in \(message.fileCount) record files"))
        }
        parts.startControl(bus: bus)
        parts.watcher.start()
        // The scan's albums are decided on (not downloaded) before READY, so its STATUS= counts them.
        parts.coordinator.drain()
        parts.waitForLeftoverSweep()
        bus.post(LifecycleChanged(.ready, detail: "\(parts.watcher.albumCount) albums from \(config.recordsDirectory)"))
        if readiness.withLock({ state in
            state.parts = parts
            defer { state.reloadPending = false }
            return state.reloadPending
        }) {
            reload()
        }

        stopRequested.wait()
        readiness.withLock { $0.parts = nil }
        bus.post(LifecycleChanged(.stopping))
        watchdog?.stop()
        readyAfterReload.cancel()
        parts.shutDown()
    }

    /// Asks `run()` to shut down; safe from any thread, more than once.
    public func requestStop() {
        guard !stopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
        stopRequested.signal()
    }

    /// SIGHUP: a new configuration (or the old one, if the new one is
    /// invalid), then the watcher rescans and the coordinator retries.
    private func reload() {
        guard !stopping.load(ordering: .acquiring) else { return }
        let parts = readiness.withLock { state -> DaemonParts? in
            if state.parts == nil { state.reloadPending = true }
            return state.parts
        }
        guard let parts else { return }
        bus.post(LifecycleChanged(.reloading))
        let next: Configuration
        do {
            next = try reloadConfiguration()
            let previous = configuration.withLock { $0 }
            if next.cacheDirectory != previous.cacheDirectory || next.recordsDirectory != previous.recordsDirectory {
                bus.post(OperationFailed(
                    operation: "move the records or cache directory on reload",
                    error: "a new records or cache directory takes effect at the next restart", severity: .warning))
            }
            configuration.withLock { $0 = Daemon.keepingDirectories(of: previous, next) }
        } catch {
            bus.post(OperationFailed(
                operation: "reload the configuration", error: "\(error); keeping the previous configuration", severity: .warning))
        }
        let current = configuration.withLock { $0 }
        logLevel.current = current.logLevel
        parts.apply(current, bus: bus)
        bus.post(ReloadRequested())
    }

    private static func keepingDirectories(of previous: Configuration, _ next: Configuration) -> Configuration {
        var merged = next
        merged.recordsDirectory = previous.recordsDirectory
        merged.cacheDirectory = previous.cacheDirectory
        return merged
    }
}
