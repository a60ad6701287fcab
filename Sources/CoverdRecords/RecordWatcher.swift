import Dispatch
import Synchronization
import CoverdBase

/// Reads the album records and follows them with inotify, posting what
/// changed on the bus: `AlbumsUpdated`, `AlbumsWithdrawn`, rejections and
/// scan completions. It never talks to the coordinator directly.
///
/// Threading: all file reading and catalog work happens on the watcher's
/// serial queue; the tree lives behind a mutex only that queue takes.
public final class RecordWatcher: Sendable {
    private let bus: EventBus
    private let queue = DispatchQueue(label: "coverd.records")
    private let tree: Mutex<RecordTree>
    private let source: Mutex<(any DispatchSourceRead)?> = Mutex(nil)
    private let reloadObservation: Mutex<ObservationToken?> = Mutex(nil)

    public init(directory: String, limits: RecordLimits, bus: EventBus) throws(SystemError) {
        self.bus = bus
        try makeDirectories(directory)
        tree = Mutex(try RecordTree(root: normalisePath(directory), reader: RecordFileReader(limits: limits)))
    }

    /// Scans the records, arms the watch, and returns once both are done
    /// (the moment systemd may be told the daemon is ready).
    public func start() {
        queue.sync {
            rescan(reason: .startup)
            let fd = tree.withLock { $0.inotify.descriptor }
            source.withLock { source in
                let reader = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
                reader.setEventHandler { [weak self] in self?.drain() }
                reader.resume()
                source = reader
            }
        }
        let token = bus.observe(ReloadRequested.self, on: queue) { [weak self] _ in
            self?.rescan(reason: .reload)
        }
        reloadObservation.withLock { $0 = token }
    }

    /// New limits (a reload), for the files read from now on: on the
    /// watcher's queue, so a `ReloadRequested` posted after this call rescans with them.
    public func apply(_ limits: RecordLimits) {
        queue.async { [self] in tree.withLock { $0.reader.limits = limits } }
    }

    /// Stops watching; events after this are not read.
    public func stop() {
        reloadObservation.withLock { $0?.cancel() }
        queue.sync {
            source.withLock { source in
                source?.cancel()
                source = nil
            }
        }
    }

    /// How many albums the records hold now.
    public var albumCount: Int {
        queue.sync { tree.withLock { $0.catalog.albumCount } }
    }

    private func drain() {
        var output = RecordTreeOutput()
        tree.withLock { tree in
            tree.drainEvents(into: &output)
            if output.rootGone { tree.recreateRoot(into: &output) }
            tree.endBatch()
        }
        if output.rootGone {
            bus.post(OperationFailed(
                operation: "watch the records directory",
                error: "it was deleted or moved away; its albums are gone, and it is watched again (recreated if need be)",
                severity: .warning))
        }
        publish(output)
        if output.overflowed {
            rescan(reason: .overflow)
        }
    }

    /// Files that may have been caught mid-write are read again after the writer had time to finish.
    private func scheduleRechecks(_ paths: [String]) {
        guard !paths.isEmpty else { return }
        queue.asyncAfter(deadline: .now() + .seconds(2)) { [weak self] in
            guard let self else { return }
            var output = RecordTreeOutput()
            self.tree.withLock { tree in
                for path in paths { tree.recheck(path, into: &output) }
                tree.endBatch()
            }
            self.publish(output)
        }
    }

    private func rescan(reason: RecordScanCompleted.Reason) {
        var output = RecordTreeOutput()
        let (count, albums, files) = tree.withLock { tree in
            tree.scan(force: reason == .reload, into: &output)
            tree.endBatch()
            // The first scan's ids would only be built to go unused, at the daemon's memory peak.
            let ids = reason == .startup ? nil : Set(tree.catalog.albums.map(\.id))
            return (tree.catalog.albumCount, ids, tree.catalog.fileCount)
        }
        // The scan's parsing has freed its buffers; the decisions on its albums come next.
        if reason == .startup { MallocSettings.releaseFreePages() }
        publish(output)
        bus.post(RecordScanCompleted(
            reason: reason, albumCount: count, fileCount: files, albumIDs: albums, unreadable: output.unreadable))
    }

    private func publish(_ output: RecordTreeOutput) {
        scheduleRechecks(output.recheck)
        for error in output.fileErrors { bus.post(RecordFileFailed(error: error)) }
        for rejection in output.rejections { bus.post(RecordRejected(rejection: rejection)) }
        for duplicate in output.change.duplicates { bus.post(DuplicateAlbumFound(duplicate: duplicate)) }
        for problem in output.problems {
            bus.post(OperationFailed(operation: "watch the records", error: problem.description, severity: .warning))
        }
        let removed = output.change.removed
        if !removed.isEmpty { bus.post(AlbumsWithdrawn(albums: removed)) }
        if !output.gone.isEmpty { bus.post(RecordFilesRemoved(paths: output.gone)) }
        let upserted = output.change.upserted
        if !upserted.isEmpty { bus.post(AlbumsUpdated(albums: upserted)) }
    }
}

extension RecordWatcher: LivenessProbing {
    public func probe(_ reply: @escaping @Sendable () -> Void) {
        queue.async(execute: reply)
    }
}
