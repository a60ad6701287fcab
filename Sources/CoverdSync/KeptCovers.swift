import CoverdCache
import CoverdModel
import Foundation

/// The albums that left the records while their covers were cached: their
/// index rows (with `removedAt`), their covers kept in `removed/` until
/// `keepFor` after they left (contract §9). An album that comes back in
/// that time with the same job gets its cover back without a download.
///
/// The purge order is the order of leaving, so the next one due is always
/// at the front; an album taken back (or kept again) leaves a stale entry
/// there, skipped when reached, and the order is rebuilt from the rows when
/// stale entries outnumber them, so albums that leave and come back often
/// (an editor that deletes and rewrites a file) do not grow it for a week.
struct KeptCovers {
    private(set) var rows: [AlbumID: IndexRow] = [:]
    private var order: [(removedAt: Date, id: AlbumID)] = []
    private var head = 0
    /// False after a row came out of order (rows load in id order; the clock may step back): sorted when next needed.
    private var inOrder = true
    /// Entries in `order` from `head` on whose row was taken or kept again since.
    private(set) var staleEntries = 0

    var count: Int { rows.count }

    func row(_ id: AlbumID) -> IndexRow? { rows[id] }

    /// Keeps `row` (its `removedAt` set) until it is taken or purged.
    mutating func keep(_ row: IndexRow) {
        guard let removedAt = row.removedAt else { preconditionFailure("kept row \(row.id) without removedAt") }
        if rows.updateValue(row, forKey: row.id) != nil { staleEntries += 1 }
        if let last = order.last, last.removedAt > removedAt { inOrder = false }
        order.append((removedAt, row.id))
    }

    /// The row of `id`, no longer kept (its album came back, or its cover is gone).
    mutating func take(_ id: AlbumID) -> IndexRow? {
        guard let row = rows.removeValue(forKey: id) else { return nil }
        staleEntries += 1
        if staleEntries > max(Self.staleAllowance, rows.count) { rebuild() }
        return row
    }

    /// Stale entries below this many are left for the front to skip: a rebuild sorts every row.
    static let staleAllowance = 1024

    /// The order anew from the rows, with no stale entry.
    private mutating func rebuild() {
        order = rows.values.compactMap { row in row.removedAt.map { ($0, row.id) } }.sorted { $0.removedAt < $1.removedAt }
        head = 0
        inOrder = true
        staleEntries = 0
    }

    /// When the next kept cover is due to go, after `keepFor`.
    mutating func nextDue(keepFor: Duration) -> Date? {
        dropStale()
        guard head < order.count else { return nil }
        return order[head].removedAt.addingTimeInterval(keepFor.seconds)
    }

    /// Takes every row due by `now`; their covers are to be deleted.
    mutating func takeDue(now: Date, keepFor: Duration) -> [IndexRow] {
        var due: [IndexRow] = []
        while let next = nextDue(keepFor: keepFor), next <= now {
            let id = order[head].id
            head += 1
            // nextDue left a live entry at the front.
            if let row = rows.removeValue(forKey: id) { due.append(row) }
        }
        compact()
        return due
    }

    /// Skips front entries whose album was taken back or kept again since.
    private mutating func dropStale() {
        if !inOrder {
            order = order[head...].sorted { $0.removedAt < $1.removedAt }
            head = 0
            inOrder = true
        }
        while head < order.count {
            let entry = order[head]
            if let row = rows[entry.id], row.removedAt == entry.removedAt { return }
            head += 1
            staleEntries -= 1
        }
        compact()
    }

    private mutating func compact() {
        guard head > 0, head * 2 >= order.count else { return }
        order.removeFirst(head)
        head = 0
    }
}
