import Glibc
import CoverdCache
import CoverdModel

/// The index rows of earlier runs that no record has claimed yet in this one.
///
/// At start-up every row is loaded, then claimed one by one as the scan
/// finds its album; what is left when the first scan completes belongs to
/// albums deleted while the daemon was stopped. The rows are held packed
/// (`PackedRowCoding`) in one byte buffer, in id order, and found by binary
/// search: they coexist with every album the first scan read, at the
/// daemon's memory peak, and packed they take a third of what `IndexRow`s
/// with their strings do.
struct PersistedRows {
    private var buffer: [UInt8] = []
    /// Where each row starts in `buffer`.
    private var starts: [UInt32] = []
    private var claimed: [Bool] = []
    /// Record paths, each stored once; rows refer to them by index.
    private var records: [String] = []
    private var recordIndex: [String: Int] = [:]
    private var sorted = true
    private(set) var unclaimedCount = 0
    /// Per row, whether a claim would have to look at its cover on disk (a
    /// pending row, or a cached one without a stamp); a bit beside `claimed`,
    /// so the packed rows keep no string of their own alive.
    private var needsCheck: [Bool] = []
    /// How many unclaimed rows need such a look: usually none, so a first
    /// scan over a cached library asks nothing of them.
    private var unclaimedToCheck = 0

    init() {}

    init(_ loaded: [IndexRow]) {
        reserve(loaded.count)
        loaded.forEach { append($0) }
    }

    /// Bytes the packed rows take (for tests and diagnostics).
    var packedBytes: Int { buffer.count + starts.count * MemoryLayout<UInt32>.stride + claimed.count + needsCheck.count }

    mutating func reserve(_ count: Int) {
        buffer.reserveCapacity(count * 112)  // A little over a typical row, so loading rarely regrows it.
        starts.reserveCapacity(count)
        claimed.reserveCapacity(count)
        needsCheck.reserveCapacity(count)
    }

    /// Adds a row; rows arriving in id order (as the index returns them) need
    /// no sorting.
    mutating func append(_ row: IndexRow) {
        let record: Int
        if let known = recordIndex[row.record] {
            record = known
        } else {
            record = records.count
            records.append(row.record)
            recordIndex[row.record] = record
        }
        let start = buffer.count
        precondition(start <= Int(UInt32.max), "index rows beyond 4 GiB packed")
        PackedRowCoding.encode(row, recordIndex: record, into: &buffer)
        if let last = starts.last, compareIDs(Int(last), start) >= 0 { sorted = false }
        starts.append(UInt32(start))
        claimed.append(false)
        unclaimedCount += 1
        let check = row.state == .pending || (row.state == .cached && row.stamp == nil)
        needsCheck.append(check)
        if check { unclaimedToCheck += 1 }
    }

    /// Whether any unclaimed row may need its cover looked at (`mayNeedCheck`).
    var hasRowsToCheck: Bool { unclaimedToCheck > 0 }

    /// Whether `id`'s unclaimed row, claimed, would need its cover looked at:
    /// it is pending, or cached without a stamp.
    mutating func mayNeedCheck(_ id: AlbumID) -> Bool {
        unclaimedIndex(of: id).map { needsCheck[$0] } ?? false
    }

    /// The row for `id`, if it is still unclaimed, left unclaimed.
    mutating func peek(_ id: AlbumID) -> IndexRow? {
        guard let index = unclaimedIndex(of: id) else { return nil }
        return PackedRowCoding.decode(buffer, at: Int(starts[index]), records: records)
    }

    /// The row for `id`, if it is still unclaimed; it is claimed by this call.
    mutating func claim(_ id: AlbumID) -> IndexRow? {
        guard let index = unclaimedIndex(of: id) else { return nil }
        claimed[index] = true
        unclaimedCount -= 1
        if needsCheck[index] { unclaimedToCheck -= 1 }
        return PackedRowCoding.decode(buffer, at: Int(starts[index]), records: records)
    }

    /// Every unclaimed row, in id order, left unclaimed.
    mutating func unclaimedRows() -> [IndexRow] {
        sortIfNeeded()
        return starts.indices.compactMap { index in
            claimed[index] ? nil : PackedRowCoding.decode(buffer, at: Int(starts[index]), records: records)
        }
    }

    private mutating func unclaimedIndex(of id: AlbumID) -> Int? {
        guard unclaimedCount > 0 else { return nil }
        sortIfNeeded()
        var raw = id.rawValue
        guard let index = raw.withUTF8({ position(of: $0) }), !claimed[index] else { return nil }
        return index
    }

    /// Every unclaimed row, in id order; afterwards the store is empty.
    mutating func takeUnclaimed() -> [IndexRow] {
        let left = unclaimedRows()
        self = PersistedRows()
        return left
    }

    /// Sorts by id, stably, and keeps the first row of an id loaded twice.
    private mutating func sortIfNeeded() {
        guard !sorted else { return }
        let order = starts.indices.sorted { left, right in
            let order = compareIDs(Int(starts[left]), Int(starts[right]))
            return order != 0 ? order < 0 : left < right
        }
        var keptStarts: [UInt32] = []
        var keptClaims: [Bool] = []
        var keptChecks: [Bool] = []
        for index in order where keptStarts.last.map({ compareIDs(Int($0), Int(starts[index])) != 0 }) ?? true {
            keptStarts.append(starts[index])
            keptClaims.append(claimed[index])
            keptChecks.append(needsCheck[index])
        }
        starts = keptStarts
        claimed = keptClaims
        needsCheck = keptChecks
        unclaimedCount = claimed.filter { !$0 }.count
        unclaimedToCheck = zip(claimed, needsCheck).filter { !$0 && $1 }.count
        sorted = true
    }

    /// Binary search over the sorted rows (the ids are compared as bytes, in place).
    private func position(of id: UnsafeBufferPointer<UInt8>) -> Int? {
        var low = 0
        var high = starts.count
        while low < high {
            let middle = (low + high) / 2
            if compareID(at: Int(starts[middle]), with: id) < 0 { low = middle + 1 } else { high = middle }
        }
        return low < starts.count && compareID(at: Int(starts[low]), with: id) == 0 ? low : nil
    }

    /// Bytewise, as SQLite orders the index's ids (and as `AlbumID`'s ASCII compares).
    private func compareID(at offset: Int, with id: UnsafeBufferPointer<UInt8>) -> Int {
        let range = PackedRowCoding.idRange(buffer, at: offset)
        precondition(range.upperBound <= buffer.count, "a packed id beyond its buffer")  // Unsafe slices are unchecked.
        return buffer.withUnsafeBufferPointer { Self.compare(UnsafeBufferPointer(rebasing: $0[range]), id) }
    }

    private func compareIDs(_ left: Int, _ right: Int) -> Int {
        let leftRange = PackedRowCoding.idRange(buffer, at: left)
        let rightRange = PackedRowCoding.idRange(buffer, at: right)
        precondition(max(leftRange.upperBound, rightRange.upperBound) <= buffer.count, "a packed id beyond its buffer")
        return buffer.withUnsafeBufferPointer { all in
            Self.compare(UnsafeBufferPointer(rebasing: all[leftRange]), UnsafeBufferPointer(rebasing: all[rightRange]))
        }
    }

    /// With `memcmp`: the binary search of every first-scan album compares
    /// many ids, and a byte-by-byte loop showed in that scan's decisions.
    private static func compare(_ left: UnsafeBufferPointer<UInt8>, _ right: UnsafeBufferPointer<UInt8>) -> Int {
        let common = min(left.count, right.count)
        if common > 0, let leftBase = left.baseAddress, let rightBase = right.baseAddress {
            let order = memcmp(leftBase, rightBase, common)
            if order != 0 { return order < 0 ? -1 : 1 }
        }
        return left.count == right.count ? 0 : (left.count < right.count ? -1 : 1)
    }
}
