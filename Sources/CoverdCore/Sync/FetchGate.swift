/// Holds back new downloads while downloaded bodies wait to be validated and
/// written, so that memory stays bounded however much faster the network is
/// than the disk: at most `concurrency` bodies downloading, `highWater`
/// waiting for a worker, and whatever the transfers running when the gate
/// closed bring in.
///
/// Deferred fetches start in their original order once the backlog drops
/// to `lowWater`. Not thread-safe: owned by the coordinator's queue.
struct FetchGate {
    let highWater: Int
    let lowWater: Int
    private(set) var pendingPrepares = 0
    private var deferred: [(id: FetchID, url: CoverURL)] = []
    private var head = 0
    private var cancelled: Set<FetchID> = []

    init(highWater: Int) {
        self.highWater = max(1, highWater)
        lowWater = max(0, highWater / 2)
    }

    var deferredCount: Int { deferred.count - head - cancelled.count }

    /// True when the fetch may start now; otherwise it is kept for later.
    mutating func admit(_ id: FetchID, url: CoverURL) -> Bool {
        if pendingPrepares < highWater && deferredCount == 0 { return true }
        deferred.append((id, url))
        return false
    }

    /// True when the fetch was still deferred: it is dropped and never starts.
    mutating func cancel(_ id: FetchID) -> Bool {
        guard deferred[head...].contains(where: { $0.id == id }) else { return false }
        cancelled.insert(id)
        return true
    }

    mutating func prepareStarted() {
        pendingPrepares += 1
    }

    /// A body was written (or refused); returns the deferred fetches that may start now.
    mutating func prepareFinished() -> [(id: FetchID, url: CoverURL)] {
        pendingPrepares = max(0, pendingPrepares - 1)
        guard pendingPrepares <= lowWater else { return [] }
        var released: [(id: FetchID, url: CoverURL)] = []
        while head < deferred.count && pendingPrepares + released.count < highWater {
            let next = deferred[head]
            head += 1
            if cancelled.remove(next.id) == nil { released.append(next) }
        }
        if head == deferred.count {
            deferred.removeAll(keepingCapacity: true)
            head = 0
        }
        return released
    }
}
