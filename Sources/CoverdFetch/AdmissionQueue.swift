/// Decides which waiting transfer starts next under two limits: at most
/// `concurrency` at once, and at most `perHost` at once to one origin.
///
/// Each origin has its own FIFO; origins with room take turns, so one slow
/// host with a long queue cannot starve the others. Not thread-safe: owned
/// by the transfer loop.
struct AdmissionQueue<Item> {
    var concurrency: Int
    var perHost: Int
    private var queues: [String: [Item]] = [:]
    private var heads: [String: Int] = [:]
    private var rotation: [String] = []  // origins with waiting items, in turn order
    private var active: [String: Int] = [:]
    private(set) var activeCount = 0
    private(set) var waitingCount = 0

    init(concurrency: Int, perHost: Int) {
        self.concurrency = concurrency
        self.perHost = perHost
    }

    mutating func enqueue(_ item: Item, origin: String) {
        if queues[origin] == nil {
            queues[origin] = []
            heads[origin] = 0
            rotation.append(origin)
        }
        queues[origin]!.append(item)
        waitingCount += 1
    }

    /// The next item allowed to start, counted as active until `finished(origin:)`.
    mutating func next() -> (item: Item, origin: String)? {
        guard activeCount < concurrency else { return nil }
        for turn in 0..<rotation.count {
            let origin = rotation[turn]
            guard active[origin, default: 0] < perHost else { continue }
            let head = heads[origin]!
            let item = queues[origin]![head]
            if head + 1 == queues[origin]!.count {
                queues[origin] = nil
                heads[origin] = nil
                rotation.remove(at: turn)
            } else {
                heads[origin] = head + 1
                if head + 1 >= 1024 {  // Compact now and then instead of shifting on every pop.
                    queues[origin]!.removeFirst(head + 1)
                    heads[origin] = 0
                }
                rotation.append(rotation.remove(at: turn))
            }
            waitingCount -= 1
            active[origin, default: 0] += 1
            activeCount += 1
            return (item, origin)
        }
        return nil
    }

    mutating func finished(origin: String) {
        guard let count = active[origin], count > 0 else { return }
        active[origin] = count == 1 ? nil : count - 1
        activeCount -= 1
    }

    /// Removes waiting items matching `predicate`; returns them.
    mutating func removeWaiting(where predicate: (Item) -> Bool) -> [Item] {
        var removed: [Item] = []
        for origin in rotation {
            let head = heads[origin]!
            let remaining = queues[origin]![head...].filter { item in
                if predicate(item) { removed.append(item); return false }
                return true
            }
            if remaining.isEmpty {
                queues[origin] = nil
                heads[origin] = nil
            } else {
                queues[origin] = remaining
                heads[origin] = 0
            }
        }
        rotation.removeAll { queues[$0] == nil }
        waitingCount -= removed.count
        return removed
    }
}
