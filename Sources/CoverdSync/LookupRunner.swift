import CoverdFetch
import CoverdLookup
import Dispatch
import Synchronization

/// Runs the coordinator's lookups, each in a task of its own, and hands
/// each outcome to `deliver` exactly once (a cancelled lookup's as a
/// cancelled failure). Many may run at once: most wait for MusicBrainz's
/// pacer, which keeps them to its rate.
///
/// Threading: any thread may start or cancel; `waitUntilIdle` must not be
/// called from where `deliver` needs to run.
final class LookupRunner: Sendable {
    private let lookup: CoverLookup
    private let running = Mutex<[FetchID: Task<Void, Never>]>([:])
    private let group = DispatchGroup()

    init(lookup: CoverLookup) {
        self.lookup = lookup
    }

    func start(_ id: FetchID, _ request: LookupRequest, deliver: @escaping @Sendable (LookupOutcome) -> Void) {
        group.enter()
        // Registered under the lock before the task can end, so its own removal always finds it.
        running.withLock { running in
            running[id] = Task { [lookup, group] in
                let outcome = await lookup.resolve(request)
                self.running.withLock { $0[id] = nil }
                deliver(outcome)
                group.leave()
            }
        }
    }

    /// Cancels the lookup `id`; false when no such lookup runs (it may be a fetch's id).
    @discardableResult
    func cancel(_ id: FetchID) -> Bool {
        guard let task = running.withLock({ $0[id] }) else { return false }
        task.cancel()
        return true
    }

    func cancelAll() {
        running.withLock { $0.values.forEach { $0.cancel() } }
    }

    /// Blocks until every lookup started so far has delivered its outcome.
    func waitUntilIdle() {
        group.wait()
    }
}
