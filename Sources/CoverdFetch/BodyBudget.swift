/// The bytes of cover bodies in memory, and which transfers may add to them:
/// what running transfers were granted (a body whose length is announced is
/// granted whole at its first bytes, since it is allocated whole then), plus
/// the bodies delivered and not yet consumed (written to their temporary
/// files). A count of bodies bounds nothing when covers run to megabytes, so
/// the loop starts no cover while this is at its limit, and a transfer whose
/// next grant would pass it is paused until bodies are consumed.
///
/// First come, first served: a transfer is granted nothing while an older one
/// waits, so a large body is not passed by small ones for ever. A transfer is
/// granted past the limit in two cases only: when nothing but its own bytes is
/// in memory, or when it is the oldest transfer receiving, no delivered body
/// is held, and the others hold no more than the limit (bodies of unannounced
/// length, each granted piece by piece, can share the limit out so that none
/// could finish). So memory stays within the limit plus one body, every body
/// still arrives, and, since delivered bodies are consumed and the oldest may
/// always finish, every waiting transfer gets its turn. Pure bookkeeping,
/// owned by the transfer loop.
struct BodyBudget {
    let limit: Int
    /// Delivered and not yet consumed.
    private(set) var held = 0
    /// Granted so far to each running transfer, with the order it started in.
    private var receiving: [FetchID: (order: UInt64, bytes: Int)] = [:]
    private var receivingBytes = 0
    private var nextOrder: UInt64 = 0
    /// Paused transfers, with the grant each was refused.
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

    /// Whether a new transfer may start: not while the bytes in memory are at the limit, nor while one waits.
    var admitsMore: Bool { total < limit && paused.isEmpty }

    /// A transfer that counts against the budget started.
    mutating func began(_ id: FetchID) {
        receiving[id] = (nextOrder, 0)
        nextOrder += 1
    }

    /// Whether `id` may take `count` more bytes now; false pauses it (and it is
    /// remembered as paused). Bytes taken are counted.
    mutating func take(_ count: Int, for id: FetchID) -> Bool {
        guard let entry = receiving[id] else { return true }  // not a counted transfer
        let olderWaits = paused.keys.contains { $0 != id && (receiving[$0]?.order ?? .max) < entry.order }
        // A transfer whose bytes are all that is in memory goes on even so: the older one waits for it to finish.
        let alone = entry.bytes > 0 && total == entry.bytes
        guard alone || (!olderWaits && fits(count, for: id)) else {
            paused[id] = count
            return false
        }
        paused[id] = nil
        receiving[id] = (entry.order, entry.bytes + count)
        receivingBytes += count
        return true
    }

    /// A transfer ended: the body it delivered, `kept` bytes (nil: none), is
    /// held until consumed, and the rest of its grant is given back. What is
    /// held is what the consumer will report consumed, not what was granted: a
    /// body announced longer than it arrived (libcurl takes a chunked body whose
    /// Content-Length says more) would otherwise hold the difference for ever.
    mutating func ended(_ id: FetchID, keeping kept: Int?) {
        guard let entry = receiving.removeValue(forKey: id) else { return }
        paused[id] = nil
        receivingBytes -= entry.bytes
        if let kept { held += max(0, kept) }
    }

    /// A delivered body of `bytes` was written or dropped.
    mutating func consumed(_ bytes: Int) {
        held = max(0, held - max(0, bytes))
    }

    /// Paused transfers to resume now, oldest first, as long as each one's
    /// refused grant fits beside what is in memory and granted to the ones
    /// before it; the first that does not fit stops the rest. libcurl offers a
    /// resumed transfer the piece it kept, so one resumed without room would
    /// only pause again, at every turn of the loop.
    mutating func toResume() -> [FetchID] {
        guard !paused.isEmpty else { return [] }
        var granted = 0
        var resumed: [FetchID] = []
        for (id, wanted) in paused.sorted(by: { receiving[$0.key]?.order ?? .max < receiving[$1.key]?.order ?? .max }) {
            let room = granted == 0 ? fits(wanted, for: id) : total + granted + wanted <= limit
            guard room else { break }
            resumed.append(id)
            granted += wanted
        }
        for id in resumed { paused[id] = nil }
        return resumed
    }

    /// Whether `count` more bytes fit for `id`: within the limit, or past it
    /// when all in memory is its own, or when it is the oldest receiving with
    /// no body held and no other transfer past the limit.
    private func fits(_ count: Int, for id: FetchID) -> Bool {
        let own = receiving[id]?.bytes ?? 0
        if total + count <= limit || total == own { return true }
        guard held == 0, receivingBytes - own <= limit, let order = receiving[id]?.order else { return false }
        return !receiving.values.contains { $0.order < order }
    }
}
