import Dispatch
import Foundation
import Synchronization
import CoverdBase
import CoverdCache
import CoverdFetch
import CoverdImages
import CoverdLookup
import CoverdModel
import CoverdRecords

/// The facade (BlueLibrary's `LibraryAPI`): observes album updates on the bus,
/// checks the cache, hands downloads to the fetcher, has bodies validated and
/// written off its queue, records every state change in the index and posts
/// the outcomes back on the bus.
///
/// Threading: every decision runs on one serial queue, through `SyncPlanner`;
/// fetch completions and staged files hop back onto it. Validation and
/// writing run in a pool of workers so neither a slow disk nor an inflate delays decisions.
///
/// Members without `private` are shared with the extension that looks at
/// cached covers after scans (`CoverCoordinator+Scans.swift`), nothing else.
public final class CoverCoordinator: Sendable {
    let bus: EventBus
    private let fetcher: any CoverFetching
    private let lookups: LookupRunner
    let index: CoverIndex
    let writer: IndexWriter
    let store: CoverStore
    private let directorySync: DirectorySync
    private let flushes: FlushBatcher
    /// The first scan's look at the covers it took as cached on the index's word.
    let cachedCovers = CachedCoverCheck()
    let queue = DispatchQueue(label: "coverd.coordinator")
    /// Plain PNGs' validation and temporary files, a job per core; the oldest body goes to any free worker.
    private let workers: WorkPool
    /// Conversions, apart from the workers so a slow decode never holds up plain PNGs; at most
    /// one per core (and four), because each may hold a full-size decoded image.
    private let converters: WorkPool
    /// Cancelled at `stop()`: a large conversion under way gives up rather than hold the stop.
    private let conversionCancellation = ConversionCancellation()
    /// One room for every PNG check this coordinator makes, downloads and cached files alike.
    private let inflateMemory = InflateMemory()
    /// Asked after every staged cover, by whichever pool staged it.
    private let freePageRelease = FreePageRelease(interval: .milliseconds(250))
    let state: Mutex<State>
    private let timer: Mutex<QueueTimer?> = Mutex(nil)
    private let progress: ProgressThrottle

    struct State {
        var planner: SyncPlanner
        var settings: SyncSettings
        var scheduledWakeUp: Date?
        var observations: [ObservationToken] = []
        var stopped = false
        /// The latest reload's look at every cached cover; a newer reload's replaces it.
        var reloadCheck: CachedCoverCheck?
        /// Set once the first scan is decided on: before, an album not tracked yet may still be in the records.
        var startupScanDone = false
        /// `coverd refresh` requests that came before the first scan was decided on, answered after it.
        var heldRefreshes: [(RefreshRequest, @Sendable (RefreshResult) -> Void)] = []
    }

    public init(
        bus: EventBus, fetcher: any CoverFetching, lookup: any CoverFinding, index: CoverIndex, writer: IndexWriter,
        store: CoverStore, settings: SyncSettings, flushes: FlushBatcher
    ) {
        self.bus = bus
        self.fetcher = fetcher
        lookups = LookupRunner(finder: lookup)
        self.index = index
        self.writer = writer
        self.store = store
        self.flushes = flushes
        directorySync = DirectorySync.forRenames(in: store, flushedBy: flushes) { [bus] error in
            bus.post(OperationFailed(operation: "make renames in the cache durable", error: error.description))
        }
        progress = ProgressThrottle(bus: bus, queue: queue)
        // One worker per core: validating and writing is CPU work (the syncs are batched elsewhere).
        let workerCount = max(2, ProcessInfo.processInfo.activeProcessorCount)
        workers = WorkPool(label: "coverd.covers", width: workerCount)
        converters = WorkPool(label: "coverd.convert", width: min(4, ProcessInfo.processInfo.activeProcessorCount))
        state = Mutex(State(planner: SyncPlanner(
            policy: settings.retry, paths: store.paths, keepRemoved: settings.keepRemoved, maxAge: settings.freshnessMaxAge), settings: settings))
    }

    /// Loads what the index remembers and starts observing the bus. Call before the first scan is posted.
    public func start() throws(IndexError) {
        try state.withLock { state throws(IndexError) in
            try index.forEachRow(expecting: { state.planner.expectRows($0) }) { state.planner.remember($0) }
        }
        let observations = [
            bus.observe(AlbumsUpdated.self, on: queue) { [weak self] message in
                self?.run { planner, steps, now in steps.update(message.albums, on: &planner, now: now) }
            },
            bus.observe(AlbumsWithdrawn.self, on: queue) { [weak self] message in
                self?.run { planner, steps, now in steps.withdraw(message.albums.map(\.id), on: &planner, now: now) }
            },
            bus.observe(RecordScanCompleted.self, on: queue) { [weak self] message in
                self?.scanCompleted(message)
            },
            bus.observe(RecordFilesRemoved.self, on: queue) { [weak self] message in
                self?.run { planner, steps, now in steps.recordsRemoved(message.paths, on: &planner, now: now) }
            },
        ]
        state.withLock { $0.observations = observations }
        let rearming = QueueTimer(queue: queue) { [weak self] in
            // Re-armed on every firing: the wall clock may lag the timer's monotonic clock.
            self?.run(rearm: true) { planner, steps, now in steps.timerFired(on: &planner, now: now) }
        }
        timer.withLock { $0 = rearming }
    }

    /// Stops taking work and waits until decisions in flight are done. The
    /// fetcher must be shut down after this, and `finish()` called last.
    public func stop() {
        let observations = state.withLock { state -> [ObservationToken] in
            state.stopped = true
            defer { state.observations = [] }
            return state.observations
        }
        observations.forEach { $0.cancel() }
        lookups.cancelAll()
        converters.cancelWaiting()
        conversionCancellation.cancel()
        queue.sync {
            // On the queue: a check's decision is either done or never starts.
            cachedCovers.cancel()
            state.withLock { $0.reloadCheck?.cancel() }
            timer.withLock { $0?.cancel() }
            progress.cancel()
        }
    }

    /// Waits until every message delivered so far has been decided on.
    public func drain() {
        queue.sync {}
    }

    /// After the fetcher stopped: lets staged files land (or be discarded)
    /// and flushes the index, so nothing temporary or unrecorded remains.
    ///
    /// Ordering: once stopped, no new staging starts (see `perform`), so
    /// draining the coordinator, then the workers, then the coordinator again
    /// (for their results) leaves nothing in flight.
    public func finish() {
        lookups.waitUntilIdle()  // Cancelled at stop(); their outcomes are decided on below.
        queue.sync {}
        converters.cancelWaiting()  // any submitted by a decision that was already running at stop()
        workers.waitUntilIdle()
        converters.waitUntilIdle()
        flushes.waitUntilIdle()
        queue.sync {}
        directorySync.flush()  // after the renames just made, whose syncs it waits for
        writer.flush()
    }

    // MARK: Running the planner

    /// Runs one planner step on the coordinator's queue and performs its effects.
    func run(rearm: Bool = false, _ step: (inout SyncPlanner, CoverFileSteps<DiskCoverFiles>, Date) -> [SyncEffect]) {
        dispatchPrecondition(condition: .onQueue(queue))
        let (effects, wakeUp, changedWakeUp, settings, stopped, summary) = state.withLock { state in
            let effects = step(&state.planner, CoverFileSteps(files: files(state.settings)), Date())
            let wakeUp = state.planner.nextWakeUp()
            let changed = rearm || wakeUp != state.scheduledWakeUp
            state.scheduledWakeUp = wakeUp
            return (effects, wakeUp, changed, state.settings, state.stopped, state.planner.summary)
        }
        perform(effects, settings: settings, stopped: stopped)
        if changedWakeUp {
            let delay = wakeUp.map { Duration.milliseconds(Int64((max(0, $0.timeIntervalSinceNow) * 1000).rounded(.up))) }
            timer.withLock { $0?.arm(after: delay) }
        }
        progress.offer(summary)
    }

    func files(_ settings: SyncSettings) -> DiskCoverFiles {
        DiskCoverFiles(
            store: store, directorySync: directorySync, limits: settings.imageLimits, maxBytes: settings.maxBodyBytes,
            inflateMemory: inflateMemory)
    }

    /// Performs the planner's effects. After `stop()`, no fetch or staging
    /// starts any more; decisions and index writes still complete. File
    /// effects were carried out by the step already (`CoverFileSteps`);
    /// any left are carried out here.
    private func perform(_ effects: [SyncEffect], settings: SyncSettings, stopped: Bool) {
        var changes: [IndexChange] = []
        for effect in effects {
            switch effect {
            case .fetch where stopped, .lookUp where stopped, .revalidate where stopped:
                continue
            case .stage(let request) where stopped:
                if case .download(let body) = request.source { fetcher.bodyConsumed(bytes: body.bytes.count) }
            case .fetch(let id, let url):
                startFetch(id, url: url)
            case .revalidate(let id, let key, let url, let validators):
                startRevalidation(id, job: key, url: url, validators: validators)
            case .lookUp(let id, let request):
                startLookup(id, request: request)
            case .cancelAttempt(let id):
                if !lookups.cancel(id) { fetcher.cancel(id) }
            case .stage(let request):
                let pipeline = CoverImagePipeline(
                    limits: settings.imageLimits, output: settings.imageOutput, inflateMemory: inflateMemory)
                stage(request, with: CoverStager(
                    store: store, pipeline: pipeline, flushEach: !flushes.groupCommits, cancellation: conversionCancellation))
            case .removeCover(let id):
                store.remove(id)
            case .keepCover(let id):
                store.keep(id)
            case .purgeKept(let id):
                store.purgeKept(id)
            case .discard(let temporary):
                store.discard(temporary)
            case .index(let change):
                changes.append(change)
            case .post(let message):
                bus.post(message)
            }
        }
        writer.submit(changes)
    }

    /// Validates or converts a body (or reads a cached copy) and writes one
    /// temporary file per album, in the worker pool or the conversion pool,
    /// then hands the result back once the files are durable.
    private func stage(_ request: StageRequest, with stager: CoverStager) {
        let fetchID = request.fetchID, key = request.job
        let body: [UInt8]? = if case .download(let fetched) = request.source { fetched.bytes } else { nil }
        let bodyBytes = body?.count
        let flushes = self.flushes, freePageRelease = self.freePageRelease
        let job: @Sendable () -> Void = { [weak self] in
            let ticket = flushes.beginWrite()
            let written = stager.stage(request)
            // The body is in temporary files now (or refused): the next transfer may start
            // while these wait for their flush.
            if let bodyBytes { self?.fetcher.bodyConsumed(bytes: bodyBytes) }
            freePageRelease.releaseIfDue()
            guard let self else { return }
            let deliver: @Sendable (Result<StagedCovers, StagingFailure>) -> Void = { result in
                self.queue.async {
                    self.run { planner, steps, now in steps.staged(fetchID, job: key, result: result, on: &planner, now: now) }
                }
            }
            guard case .success(let staged) = written else { return deliver(written) }
            // Renamed into place only once the data is on disk.
            flushes.afterFlush(ticket: ticket) { error in
                guard let error else {
                    // Durable, so clean: the pages can go (files fsynced one by one dropped theirs already).
                    if flushes.groupCommits { staged.temporaries.values.forEach(stager.store.dropCachedPages) }
                    return deliver(.success(staged))
                }
                staged.temporaries.values.forEach(stager.store.discard)
                deliver(.failure(.storage(error, bytes: staged.bytes)))
            }
        }
        // Conversions, and cached copies that may need scaling, go to the conversion pool.
        if body.map(stager.pipeline.decodes) ?? (stager.pipeline.output.maxDimension != nil) {
            converters.submit(job)
        } else {
            workers.submit(job)
        }
    }

    private func startLookup(_ id: FetchID, request: LookupRequest) {
        lookups.start(id, request) { [weak self] outcome in
            guard let self else { return }
            self.queue.async {
                var staging = false
                self.run { planner, _, now in
                    let effects = planner.lookupFinished(id, request: request, outcome: outcome, now: now)
                    staging = effects.contains { if case .stage(let request) = $0 { request.fetchID == id } else { false } }
                    return effects
                }
                // A cover found for albums that went away meanwhile is dropped here.
                if case .found(_, let body) = outcome, !staging { self.fetcher.bodyConsumed(bytes: body.bytes.count) }
            }
        }
    }

    private func startRevalidation(_ id: FetchID, job key: JobKey, url: CoverURL, validators: Validators) {
        fetcher.fetch(id, url: url, purpose: .revalidation(validators)) { [weak self] outcome in
            guard let self else { return }
            self.queue.async {
                var staging = false
                self.run { planner, _, now in
                    let effects = planner.revalidationFinished(id, job: key, outcome: outcome, now: now)
                    staging = effects.contains { if case .stage(let request) = $0 { request.fetchID == id } else { false } }
                    return effects
                }
                // A new body no longer wanted (its albums went away meanwhile) is dropped here.
                if case .success(let body) = outcome, !staging { self.fetcher.bodyConsumed(bytes: body.bytes.count) }
            }
        }
    }

    private func startFetch(_ id: FetchID, url: CoverURL) {
        fetcher.fetch(id, url: url) { [weak self] outcome in
            guard let self else { return }
            self.queue.async {
                var staging = false
                self.run { planner, _, now in
                    let effects = planner.fetchFinished(id, url: url, outcome: outcome, now: now)
                    staging = effects.contains { if case .stage(let request) = $0 { request.fetchID == id } else { false } }
                    return effects
                }
                // A body no longer wanted (its albums went away meanwhile) is dropped here.
                if case .success(let body) = outcome, !staging { self.fetcher.bodyConsumed(bytes: body.bytes.count) }
            }
        }
    }

    /// New settings (a reload); retries and covers stored from now on use them.
    public func apply(_ settings: SyncSettings) {
        state.withLock { state in
            state.settings = settings
            state.planner.policy = settings.retry
            state.planner.keepRemoved = settings.keepRemoved
            state.planner.freshness.setMaxAge(settings.freshnessMaxAge, unit: state.planner.random)
        }
    }
}

extension CoverCoordinator: LivenessProbing {
    public func probe(_ reply: @escaping @Sendable () -> Void) {
        queue.async(execute: reply)
    }
}

extension CoverCoordinator: CoverRefreshing {
    /// Answered once the first scan is decided on: until then an album of the
    /// records may not be tracked yet, and would be called unknown.
    public func refresh(_ request: RefreshRequest, reply: @escaping @Sendable (RefreshResult) -> Void) {
        queue.async { [self] in
            let held = state.withLock { state -> Bool in
                guard !state.startupScanDone else { return false }
                state.heldRefreshes.append((request, reply))
                return true
            }
            if !held { act(on: request, reply: reply) }
        }
    }

    /// The refreshes that waited for the first scan, now that it is decided on.
    func answerHeldRefreshes() {
        dispatchPrecondition(condition: .onQueue(queue))
        let held = state.withLock { state in
            state.startupScanDone = true
            defer { state.heldRefreshes = [] }
            return state.heldRefreshes
        }
        for (request, reply) in held { act(on: request, reply: reply) }
    }

    private func act(on request: RefreshRequest, reply: @Sendable (RefreshResult) -> Void) {
        var result = RefreshResult.refreshed(count: 0)
        run { planner, steps, now in
            let (outcome, effects) = steps.refresh(request, on: &planner, now: now)
            result = outcome
            return effects
        }
        reply(result)
    }
}
