/// The index rows of earlier runs that no record has claimed yet in this one.
///
/// At start-up every row is loaded, then claimed one by one as the scan
/// finds its album; what is left when the first scan completes belongs to
/// albums deleted while the daemon was stopped. Kept as one array sorted by
/// id: a dictionary of 100,000 rows of this size costs about three times the
/// memory (half its buckets stay empty). A claimed row keeps only its id.
struct PersistedRows {
    private var rows: [IndexRow] = []
    private var claimed: [Bool] = []
    private var sorted = true
    private(set) var unclaimedCount = 0

    init() {}

    init(_ loaded: [IndexRow]) {
        reserve(loaded.count)
        loaded.forEach { append($0) }
    }

    mutating func reserve(_ count: Int) {
        rows.reserveCapacity(count)
        claimed.reserveCapacity(count)
    }

    /// Adds a row; rows arriving in id order (as the index returns them) need no sorting.
    mutating func append(_ row: IndexRow) {
        if let last = rows.last, !(last.id < row.id) { sorted = false }
        rows.append(row)
        claimed.append(false)
        unclaimedCount += 1
    }

    /// The row for `id`, if it is still unclaimed; it is claimed by this call.
    mutating func claim(_ id: AlbumID) -> IndexRow? {
        guard unclaimedCount > 0 else { return nil }
        sortIfNeeded()
        guard let index = position(of: id), !claimed[index] else { return nil }
        claimed[index] = true
        unclaimedCount -= 1
        let row = rows[index]
        // Only the id is needed any more (for the search); the text goes now, not after the scan.
        rows[index].title = ""
        rows[index].artist = ""
        rows[index].year = nil
        rows[index].genre = nil
        rows[index].coverURL = ""
        rows[index].record = ""
        rows[index].error = nil
        return row
    }

    /// Every unclaimed row, in id order; afterwards the store is empty.
    mutating func takeUnclaimed() -> [IndexRow] {
        sortIfNeeded()
        let left = zip(rows, claimed).compactMap { $1 ? nil : $0 }
        self = PersistedRows()
        return left
    }

    /// Sorts by id, stably, and keeps the first row of an id loaded twice.
    private mutating func sortIfNeeded() {
        guard !sorted else { return }
        let order = rows.indices.sorted { (rows[$0].id, $0) < (rows[$1].id, $1) }
        var keptRows: [IndexRow] = []
        var keptClaims: [Bool] = []
        for index in order where keptRows.last?.id != rows[index].id {
            keptRows.append(rows[index])
            keptClaims.append(claimed[index])
        }
        rows = keptRows
        claimed = keptClaims
        unclaimedCount = claimed.filter { !$0 }.count
        sorted = true
    }

    private func position(of id: AlbumID) -> Int? {
        var low = 0
        var high = rows.count
        while low < high {
            let middle = (low + high) / 2
            if rows[middle].id < id { low = middle + 1 } else { high = middle }
        }
        return low < rows.count && rows[low].id == id ? low : nil
    }
}
