import Foundation
import CoverdBase
import CoverdCache
import CoverdConfig
import CoverdControl
import CoverdFetch
import CoverdLookup
import CoverdRecords
import CoverdSync

/// The daemon's running parts, built in dependency order: cache directory,
/// its lock (`CacheLock`), leftovers swept (in the background), index, fetcher, index writer,
/// coordinator (observing the bus before any album is posted), watcher, the
/// control server (started by `startControl`); then how covers will be made
/// durable is announced (`CacheDurabilityChosen`). A failure part-way shuts
/// down what was already started.
struct DaemonParts {
    let store: CoverStore
    let fetcher: CurlFetcher
    let lookup: CoverLookup
    let writer: IndexWriter
    let coordinator: CoverCoordinator
    let watcher: RecordWatcher
    /// `coverd refresh` and `status --follow`; nil when its path cannot be worked out (said as a warning).
    let control: ControlServer?
    /// Left when the sweep of an earlier run's temporary files is done.
    private let leftoverSweep: DispatchGroup
    /// Held while the daemon runs: one daemon per cache.
    private let lock: CacheLock

    var probes: [any LivenessProbing] { [coordinator, watcher, fetcher, writer] }

    init(configuration config: Configuration, bus: EventBus) throws(DaemonError) {
        do {
            try makeDirectories(config.cacheDirectory)
        } catch {
            throw DaemonError("cannot create the cache directory: \(error)\(DaemonParts.sandboxHint(error.code))", errno: error.code)
        }
        // Before anything touches the cache: a second daemon's sweep would delete the first one's temporaries.
        do {
            lock = try CacheLock(cacheDirectory: config.cacheDirectory)
            if !lock.isHeld {
                bus.post(OperationFailed(
                    operation: "lock the cache", error: "its filesystem does not support locks: nothing stops a second daemon on it",
                    severity: .warning))
            }
        } catch {
            switch error {
            case .system(let failure): throw DaemonError("\(error)", errno: failure.code)
            case .held: throw DaemonError("\(error)", cacheInUse: true)
            }
        }
        do {
            let setUp = try CoverStore(cacheDirectory: config.cacheDirectory, reserveBytes: config.minFreeBytes).setUp()
            store = setUp.store
            if let failure = setUp.renameFailure {
                bus.post(OperationFailed(
                    operation: "write covers through \(store.incomingDirectory)",
                    error: "\(failure); writing them in \(store.directory) instead", severity: .notice))
            }
        } catch {
            throw DaemonError("cannot create the cache directory: \(error)\(DaemonParts.sandboxHint(error.code))", errno: error.code)
        }
        // Listing a large cache's covers after a boot reads the directory's
        // blocks from disk (bench/HISTORY.md), so it runs beside the index
        // load and the first scan; this run's own temporary files are spared.
        let sweep = DispatchGroup()
        leftoverSweep = sweep
        // A start that fails after this point waits for the sweep, so its notice is not lost.
        var started = false
        defer { if !started { sweep.wait() } }
        DispatchQueue(label: "coverd.leftovers").async(group: sweep) { [store] in
            let leftovers = store.removeLeftovers(sparingThisRun: true)
            guard !leftovers.isEmpty else { return }
            bus.post(OperationFailed(
                operation: "cleaned up after an unclean stop",
                error: "removed \(leftovers.count) temporary file(s): \(leftovers.prefix(3).joined(separator: ", "))\(leftovers.count > 3 ? ", …" : "")",
                severity: .notice))
        }
        let index: CoverIndex
        let reserve = SpaceReserve(directory: config.cacheDirectory)
        // On a full disk the reserve makes room to open the index, so that the
        // daemon starts (and waits for space) rather than exits at every restart.
        var noRoom: IndexError?
        do {
            let opened = try CoverIndex.openReplacingCorrupt(cacheDirectory: config.cacheDirectory) { error in
                guard reserve.release() else { return false }
                noRoom = error
                return true
            }
            if let noRoom {
                bus.post(OperationFailed(
                    operation: "open the index without the space reserve",
                    error: "\(noRoom); released the reserve (\(reserve.path)) and opened it with that room", severity: .warning))
            }
            index = opened.index
            if let moved = opened.movedAside {
                bus.post(OperationFailed(
                    operation: "open the index",
                    error: "\(moved.reason); moved it to \(moved.path) and started a new index (every cover is fetched again)"))
            }
        } catch {
            let released = noRoom.map { " (even with the space reserve released, after \($0.message))" } ?? ""
            throw DaemonError("cannot open the index: \(error)\(released)", errno: error.systemErrno ?? EIO)
        }
        do {
            fetcher = try CurlFetcher(settings: config.fetch)
        } catch {
            throw DaemonError("cannot start the fetcher: \(error)", errno: error.code)
        }
        for note in fetcher.notes { bus.post(OperationFailed(operation: "set up TLS", error: note, severity: .warning)) }
        lookup = CoverLookup(fetcher: fetcher, settings: config.lookup)
        writer = IndexWriter(index: index, reserve: reserve) { error in
            bus.post(OperationFailed(operation: "write the index", error: error.description))
        }
        let flushes = FlushBatcher(directory: store.directory)
        coordinator = CoverCoordinator(
            bus: bus, fetcher: fetcher, lookup: lookup, index: index, writer: writer, store: store, settings: config.sync,
            flushes: flushes)
        do {
            watcher = try RecordWatcher(directory: config.recordsDirectory, limits: config.records, bus: bus)
        } catch {
            fetcher.shutdown()
            throw DaemonError("cannot watch the records directory: \(error)\(DaemonParts.sandboxHint(error.code))", errno: error.code)
        }
        do {
            try coordinator.start()
        } catch {
            fetcher.shutdown()
            // Damage past what opening reads: moved aside now, so that the next start (systemd restarts us) makes a new index.
            // This process still has it open; its close then finds the old file through the descriptor, and no new index
            // can exist yet: this process holds the lock until it exits.
            if error.isCorrupt, let aside = CoverIndex.moveAside(cacheDirectory: config.cacheDirectory) {
                throw DaemonError(
                    "cannot read the index: \(error); moved it to \(aside): the next start makes a new index and fetches every cover again",
                    errno: EIO)
            }
            throw DaemonError("cannot read the index: \(error)", errno: error.systemErrno ?? EIO)
        }
        do {
            let path = try ControlSocketPath.forDaemon(
                cacheDirectory: config.cacheDirectory, environment: ProcessInfo.processInfo.environment)
            control = ControlServer(
                socketPath: path, fallback: try ControlSocketPath.cacheFallback(cacheDirectory: config.cacheDirectory), refresher: coordinator,
                bus: bus, ownsCache: lock.isHeld)
        } catch {
            control = nil
            bus.post(OperationFailed(operation: "set up the control socket", error: DaemonParts.withoutControl(error), severity: .warning))
        }
        bus.post(CacheDurabilityChosen(directory: store.directory, method: flushes.durability))
        started = true
    }

    /// Hands each part its share of a reloaded configuration; call before
    /// posting `ReloadRequested`, which the parts act on with these settings.
    func apply(_ config: Configuration, bus: EventBus) {
        do {
            for note in try fetcher.apply(config.fetch) {
                bus.post(OperationFailed(operation: "set up TLS", error: note, severity: .warning))
            }
        } catch {
            bus.post(OperationFailed(operation: "apply the new fetch settings", error: error.description))
        }
        lookup.apply(config.lookup)
        coordinator.apply(config.sync)
        watcher.apply(config.records)
    }

    /// Listens for `coverd refresh` and `status --follow`: before the first
    /// scan, so followers see its progress. A failure is a warning and the
    /// daemon runs on without the socket.
    func startControl(bus: EventBus) {
        guard let control else { return }
        do {
            try control.start()
        } catch {
            bus.post(OperationFailed(
                operation: "listen on a control socket", error: DaemonParts.withoutControl(error), severity: .warning))
        }
    }

    private static func withoutControl(_ error: ControlError) -> String {
        "\(error); coverd refresh and status --follow cannot reach this daemon"
    }

    /// Waits for the sweep of leftovers: before READY, so a ready daemon's cache holds none.
    func waitForLeftoverSweep() {
        leftoverSweep.wait()
    }

    /// Under the systemd unit only the cache and the records directory's parent are writable.
    static func sandboxHint(_ code: Int32) -> String {
        guard code == EROFS || code == EACCES, ProcessInfo.processInfo.environment["INVOCATION_ID"] != nil else { return "" }
        return "; under the coverd.service sandbox only ~/.cache/coverd and ~/.local/share/coverd are writable: "
            + "use those, or allow the path with ReadWritePaths= in a drop-in (systemctl --user edit coverd)"
    }

    /// Stops taking work, cancels transfers, lets staged files land or go,
    /// flushes the index, and removes any temporary file.
    func shutDown() {
        leftoverSweep.wait()  // Its notice comes before the stop's, and it is done before every temporary goes below.
        control?.stop()  // First: followers hear the daemon stops, and no refresh arrives while it does.
        watcher.stop()
        coordinator.stop()
        fetcher.shutdown()
        coordinator.finish()
        _ = store.removeLeftovers()
        // Held until everything above is done: the lock is otherwise never read, and a value's lifetime may end at its last use.
        withExtendedLifetime(lock) {}
    }
}
