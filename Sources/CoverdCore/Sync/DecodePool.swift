import Dispatch
import Synchronization

/// Runs conversions (JPEG, WebP, GIF, scaling) at most `width` at a time, in
/// arrival order, apart from the queues that validate plain PNGs.
///
/// Why not a few serial queues: a job hashed to a busy queue would wait behind
/// one slow decode while another queue sat idle. Here any free slot takes the
/// oldest waiting job. `width` also bounds memory: each running job may hold
/// one decoded image (itself bounded by the image limits).
final class DecodePool: Sendable {
    private let queue: DispatchQueue
    private let width: Int
    private let group = DispatchGroup()
    private let state = Mutex(State())

    private struct State {
        var running = 0
        var waiting: [@Sendable () -> Void] = []
        var next = 0  // index of the oldest waiting job; the array is compacted when it empties
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
                defer { state.next += 1 }
                return state.waiting[state.next]
            }
            group.leave()
            if let next { run(next) }
        }
    }
}
