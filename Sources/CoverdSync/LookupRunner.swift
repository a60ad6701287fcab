import CoverdFetch
import CoverdLookup
import Dispatch
import Synchronization

/// Runs the coordinator's lookups and hands each outcome to `deliver`
/// exactly once (a cancelled lookup's as a cancelled failure).
///
/// Lookups wait in two FIFO lanes, each with a bounded number running, so a
/// library of thousands costs a queue entry each, not a task each. Albums with
/// MusicBrainz ids start at the Cover Art Archive, which has no rate limit;
/// albums without start with a search, which waits for MusicBrainz's pacer:
/// apart, a long queue of searches never holds up the archive's lookups.
///
/// Threading: any thread may start or cancel. After `cancelAll` the runner
/// is closed: what it held and what it is given later ends cancelled at
/// once, so `waitUntilIdle` returns within a transfer's cancellation.
/// `waitUntilIdle` must not be called from where `deliver` needs to run.
final class LookupRunner: Sendable {
    private struct Queued {
        let id: FetchID
        let request: LookupRequest
        let deliver: @Sendable (LookupOutcome) -> Void
    }

    private enum Lane: CaseIterable {
        case archiveFirst, searchFirst

        init(_ request: LookupRequest) {
            self = request.releaseID == nil && request.releaseGroupID == nil ? .searchFirst : .archiveFirst
        }

        /// Enough at once to keep the fetcher's transfers busy; a search lane
        /// needs only a few, as MusicBrainz takes one a second.
        var width: Int {
            switch self {
            case .archiveFirst: 64
            case .searchFirst: 4
            }
        }
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
        var closed = false
    }

    private let lookup: CoverLookup
    private let lanes = Mutex(Lanes())
    private let group = DispatchGroup()
    private static let cancelled = LookupOutcome.failed(FetchFailure(kind: .cancelled, message: "cancelled"))

    init(lookup: CoverLookup) {
        self.lookup = lookup
    }

    func start(_ id: FetchID, _ request: LookupRequest, deliver: @escaping @Sendable (LookupOutcome) -> Void) {
        group.enter()
        let accepted = lanes.withLock { lanes in
            guard !lanes.closed else { return false }
            lanes.queued[id] = Queued(id: id, request: request, deliver: deliver)
            lanes.lines[Lane(request), default: Line()].append(id)
            startDue(&lanes)
            return true
        }
        if !accepted { finish(deliver, Self.cancelled) }
    }

    /// Cancels the lookup `id`; false when no such lookup is queued or runs (it may be a fetch's id).
    @discardableResult
    func cancel(_ id: FetchID) -> Bool {
        enum Found { case queued(Queued), running(Task<Void, Never>), none }
        let found = lanes.withLock { lanes -> Found in
            if let task = lanes.running[id] { return .running(task) }
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

    /// Starts queued lookups while their lane has room. Under the lock: a
    /// task is registered before it can end, so its own removal finds it.
    private func startDue(_ lanes: inout Lanes) {
        for lane in Lane.allCases {
            while lanes.runningCount[lane, default: 0] < lane.width, let id = lanes.lines[lane]?.popFirst() {
                guard let next = lanes.queued.removeValue(forKey: id) else { continue }  // cancelled while queued
                lanes.runningCount[lane, default: 0] += 1
                lanes.running[id] = Task { [lookup] in
                    let outcome = await lookup.resolve(next.request)
                    self.lanes.withLock { lanes in
                        lanes.running[id] = nil
                        lanes.runningCount[lane, default: 1] -= 1
                        if !lanes.closed { self.startDue(&lanes) }
                    }
                    self.finish(next.deliver, outcome)
                }
            }
        }
    }

    private func finish(_ deliver: @Sendable (LookupOutcome) -> Void, _ outcome: LookupOutcome) {
        deliver(outcome)
        group.leave()
    }
}
