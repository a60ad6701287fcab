import Dispatch
import Synchronization

/// Runs jobs at most `width` at a time, in arrival order: the coordinator has
/// one pool for conversions (JPEG, WebP, GIF, scaling) and one for validating
/// and writing plain PNGs, so a slow decode never holds up a plain PNG.
///
/// Why not a few serial queues: a job hashed to a busy queue would wait behind
/// one slow decode while another queue sat idle. Here any free slot takes the
/// oldest waiting job. `width` also bounds memory: each running job may hold
/// one decoded image (itself bounded by the image limits).
final class WorkPool: Sendable {
    private let queue: DispatchQueue
    private let width: Int
    private let group = DispatchGroup()
    private let state = Mutex(State())

    private struct State {
        var running = 0
        /// Taken jobs are set to nil at once: a job holds its body until it is released.
        var waiting: [(@Sendable () -> Void)?] = []
        var next = 0  // index of the oldest waiting job
    }

    init(label: String, width: Int) {
        self.width = max(1, width)
        queue = DispatchQueue(label: label, qos: .utility, attributes: .concurrent)
    }

    func submit(_ job: @escaping @Sendable () -> Void) {
        group.enter()
        let start = state.withLock { state -> Bool in
            guard state.running < width else {
                state.waiting.append(job)
                return false
            }
            state.running += 1
            return true
        }
        if start { run(job) }
    }

    /// Blocks until every submitted job has finished (used at shutdown, after
    /// the coordinator stopped submitting).
    func waitUntilIdle() {
        group.wait()
    }

    /// Drops the jobs that have not started (at shutdown: a backlog of large
    /// conversions could outlast the stop timeout). Their albums stay pending.
    func cancelWaiting() {
        let dropped = state.withLock { state -> Int in
            defer {
                state.waiting = []
                state.next = 0
            }
            return state.waiting.count - state.next
        }
        for _ in 0..<dropped { group.leave() }
    }

    private func run(_ job: @escaping @Sendable () -> Void) {
        queue.async { [self] in
            job()
            let next = state.withLock { state -> (@Sendable () -> Void)? in
                guard state.next < state.waiting.count else {
                    state.running -= 1
                    state.waiting.removeAll(keepingCapacity: true)
                    state.next = 0
                    return nil
                }
                let job = state.waiting[state.next]
                state.waiting[state.next] = nil
                state.next += 1
                if state.next >= 64 && state.next * 2 >= state.waiting.count {
                    state.waiting.removeFirst(state.next)
                    state.next = 0
                }
                return job
            }
            group.leave()
            if let next { run(next) }
        }
    }
}
