/// The bytes of cover bodies in memory, and which transfers may add to them:
/// what running transfers have received so far, plus the bodies delivered and
/// not yet consumed (written to their temporary files). A count of bodies
/// bounds nothing when covers run to megabytes, so the loop starts no cover
/// while this is at its limit, and a transfer whose next piece would pass it
/// is paused until bodies are consumed.
///
/// While no delivered body waits to be consumed, the oldest running transfer
/// is never paused, so one always makes progress: a body larger than the
/// whole limit still arrives (memory is then at most the limit plus that
/// body). While bodies wait, their consumption is the progress, and nothing
/// passes the limit. Pure bookkeeping, owned by the transfer loop.
struct BodyBudget {
    let limit: Int
    /// Delivered and not yet consumed.
    private(set) var held = 0
    /// Received so far by each running transfer, with the order it started in.
    private var receiving: [FetchID: (order: UInt64, bytes: Int)] = [:]
    private var receivingBytes = 0
    private var nextOrder: UInt64 = 0
    /// Paused transfers, waiting for room for the piece they were refused.
    private var paused: [FetchID: Int] = [:]

    init(limit: Int) {
        self.limit = max(1, limit)
    }

    var total: Int { held + receivingBytes }

    /// What the budget holds now, for a look from outside the loop.
    struct Snapshot: Sendable, Equatable {
        var held: Int
        var receiving: Int
        var paused: Int
    }

    var snapshot: Snapshot { Snapshot(held: held, receiving: receivingBytes, paused: paused.count) }

    /// Whether a new transfer may start: not while the bytes in memory are at the limit.
    var admitsMore: Bool { total < limit }

    /// A transfer that counts against the budget started.
    mutating func began(_ id: FetchID) {
        receiving[id] = (nextOrder, 0)
        nextOrder += 1
    }

    /// Whether `id` may take `count` more bytes now; false pauses it (and it is
    /// remembered as paused). Bytes taken are counted.
    mutating func take(_ count: Int, for id: FetchID) -> Bool {
        guard let entry = receiving[id] else { return true }  // not a counted transfer
        if total + count > limit && !(held == 0 && id == oldest) {
            paused[id] = count
            return false
        }
        paused[id] = nil
        receiving[id] = (entry.order, entry.bytes + count)
        receivingBytes += count
        return true
    }

    /// A transfer ended: its body is held until consumed when `delivered`, else dropped.
    mutating func ended(_ id: FetchID, delivered: Bool) {
        guard let entry = receiving.removeValue(forKey: id) else { return }
        paused[id] = nil
        receivingBytes -= entry.bytes
        if delivered { held += entry.bytes }
    }

    /// A delivered body of `bytes` was written or dropped.
    mutating func consumed(_ bytes: Int) {
        held = max(0, held - max(0, bytes))
    }

    /// Paused transfers to resume now, oldest first: those whose refused piece
    /// fits in the room left by the ones before them, and the oldest running
    /// one whenever no body waits (it is not held back then). libcurl offers a
    /// resumed transfer the piece it kept, so one resumed without room would
    /// only pause again, at every turn of the loop.
    mutating func toResume() -> [FetchID] {
        guard !paused.isEmpty else { return [] }
        let lead = held == 0 ? oldest : nil
        var room = limit - total
        var resumed: [FetchID] = []
        for (id, wanted) in paused.sorted(by: { receiving[$0.key]?.order ?? .max < receiving[$1.key]?.order ?? .max })
        where id == lead || wanted <= room {
            resumed.append(id)
            room -= wanted
        }
        for id in resumed { paused[id] = nil }
        return resumed
    }

    /// The running transfer that started first.
    private var oldest: FetchID? {
        receiving.min { $0.value.order < $1.value.order }?.key
    }
}
