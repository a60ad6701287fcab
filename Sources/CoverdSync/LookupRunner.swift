import CoverdFetch
import CoverdLookup
import Dispatch
import Synchronization

/// Runs the coordinator's lookups and hands each outcome to `deliver`
/// exactly once (a cancelled lookup's as a cancelled failure).
///
/// A lookup runs in two parts (`CoverFinding`), each in its own FIFO lane
/// with a bounded number running, so a library of thousands costs a queue
/// entry each, not a task each. The archive's part waits for nothing; the
/// part that asks MusicBrainz waits for its pacer. Apart, a long queue for
/// MusicBrainz never holds up albums whose ids the archive answers.
///
/// Threading: any thread may start or cancel. After `cancelAll` the runner
/// is closed: what it held and what it is given later ends cancelled at
/// once, so `waitUntilIdle` returns within a transfer's cancellation.
/// `waitUntilIdle` must not be called from where `deliver` needs to run.
final class LookupRunner: Sendable {
    enum Lane: CaseIterable {
        case archive, musicBrainz

        /// Enough archive parts at once to keep the fetcher's transfers busy
        /// (each holds at most one); MusicBrainz takes one request at a time,
        /// so its lane needs only a few, to overlap their archive requests.
        var width: Int {
            switch self {
            case .archive: 64
            case .musicBrainz: 4
            }
        }
    }

    private enum Work: Sendable {
        /// A new lookup: one with ids starts at the archive; one without has
        /// nothing to ask it and goes on with MusicBrainz in the same task.
        case start(LookupRequest)
        /// A lookup the archive had nothing for, going on with MusicBrainz.
        case resume(PendingLookup)

        var lane: Lane {
            switch self {
            case .start(let request): request.hasIDs ? .archive : .musicBrainz
            case .resume: .musicBrainz
            }
        }
    }

    private struct Queued: Sendable {
        let id: FetchID
        let work: Work
        let deliver: @Sendable (LookupOutcome) -> Void
    }

    /// Ids in the order they came, read from `head`; a cancelled one stays
    /// until reached and is skipped then, so cancelling costs no shifting.
    private struct Line {
        private var ids: [FetchID] = []
        private var head = 0

        mutating func append(_ id: FetchID) { ids.append(id) }

        mutating func popFirst() -> FetchID? {
            guard head < ids.count else { return nil }
            defer {
                head += 1
                if head == ids.count || head >= 4096 {  // Compact now and then, not on every pop.
                    ids.removeFirst(head)
                    head = 0
                }
            }
            return ids[head]
        }
    }

    private struct Lanes {
        var lines: [Lane: Line] = [:]
        var queued: [FetchID: Queued] = [:]
        var running: [FetchID: Task<Void, Never>] = [:]
        var runningCount: [Lane: Int] = [:]
        /// Running lookups asked to stop: a task between its parts may not
        /// have seen its cancellation yet when it hands its work on.
        var cancelRequested: Set<FetchID> = []
        var closed = false
    }

    private let finder: any CoverFinding
    private let lanes = Mutex(Lanes())
    private let group = DispatchGroup()
    private static let cancelled = LookupOutcome.failed(FetchFailure(kind: .cancelled, message: "cancelled"))

    init(finder: any CoverFinding) {
        self.finder = finder
    }

    /// Queues the lookup `id` (unique among the lookups the runner holds).
    func start(_ id: FetchID, _ request: LookupRequest, deliver: @escaping @Sendable (LookupOutcome) -> Void) {
        group.enter()
        let accepted = lanes.withLock { lanes in
            precondition(lanes.queued[id] == nil && lanes.running[id] == nil, "lookup \(id) started twice")
            return enqueue(Queued(id: id, work: .start(request), deliver: deliver), in: &lanes)
        }
        if !accepted { finish(deliver, Self.cancelled) }
    }

    /// Cancels the lookup `id`; false when no such lookup is queued or runs (it may be a fetch's id).
    @discardableResult
    func cancel(_ id: FetchID) -> Bool {
        enum Found { case queued(Queued), running(Task<Void, Never>), none }
        let found = lanes.withLock { lanes -> Found in
            if let task = lanes.running[id] {
                lanes.cancelRequested.insert(id)
                return .running(task)
            }
            if let queued = lanes.queued.removeValue(forKey: id) { return .queued(queued) }
            return .none
        }
        switch found {
        case .running(let task): task.cancel()
        case .queued(let queued): finish(queued.deliver, Self.cancelled)
        case .none: return false
        }
        return true
    }

    /// Cancels every lookup, queued or running, and closes the runner.
    func cancelAll() {
        let (queued, running) = lanes.withLock { lanes in
            lanes.closed = true
            defer { (lanes.queued, lanes.lines) = ([:], [:]) }
            return (Array(lanes.queued.values), Array(lanes.running.values))
        }
        running.forEach { $0.cancel() }
        queued.forEach { finish($0.deliver, Self.cancelled) }
    }

    /// Blocks until every lookup started so far has delivered its outcome.
    func waitUntilIdle() {
        group.wait()
    }

    /// How many lookups run in `lane` now (tests watch the widths hold).
    func runningCount(_ lane: Lane) -> Int {
        lanes.withLock { $0.runningCount[lane, default: 0] }
    }

    /// Queues `item` and starts what has room; false once the runner is closed.
    private func enqueue(_ item: Queued, in lanes: inout Lanes) -> Bool {
        guard !lanes.closed else { return false }
        lanes.queued[item.id] = item
        lanes.lines[item.work.lane, default: Line()].append(item.id)
        startDue(&lanes)
        return true
    }

    /// Starts queued work while its lane has room. Under the lock: a task
    /// is registered before it can end, so its own removal finds it.
    private func startDue(_ lanes: inout Lanes) {
        for lane in Lane.allCases {
            while lanes.runningCount[lane, default: 0] < lane.width, let id = lanes.lines[lane]?.popFirst() {
                guard let next = lanes.queued.removeValue(forKey: id) else { continue }  // cancelled while queued
                lanes.runningCount[lane, default: 0] += 1
                lanes.running[id] = Task { [finder] in
                    let ended = await Self.run(next.work, with: finder)
                    let outcome: LookupOutcome? = self.lanes.withLock { lanes in
                        lanes.running[id] = nil
                        lanes.runningCount[lane, default: 1] -= 1
                        let cancelled = lanes.cancelRequested.remove(id) != nil || Task.isCancelled
                        defer { if !lanes.closed { self.startDue(&lanes) } }
                        switch ended {
                        case .ended(let outcome):
                            return outcome
                        case .needsMusicBrainz where cancelled:
                            return Self.cancelled
                        case .needsMusicBrainz(let pending):
                            let later = Queued(id: id, work: .resume(pending), deliver: next.deliver)
                            return self.enqueue(later, in: &lanes) ? nil : Self.cancelled
                        }
                    }
                    if let outcome { self.finish(next.deliver, outcome) }
                }
            }
        }
    }

    private static func run(_ work: Work, with finder: any CoverFinding) async -> LookupStep {
        switch work {
        case .start(let request) where work.lane == .archive:
            return await finder.atArchive(request)
        case .start(let request):
            switch await finder.atArchive(request) {
            case .ended(let outcome): return .ended(outcome)
            case .needsMusicBrainz(let pending): return .ended(await finder.withMusicBrainz(pending))
            }
        case .resume(let pending):
            return .ended(await finder.withMusicBrainz(pending))
        }
    }

    private func finish(_ deliver: @Sendable (LookupOutcome) -> Void, _ outcome: LookupOutcome) {
        deliver(outcome)
        group.leave()
    }
}
