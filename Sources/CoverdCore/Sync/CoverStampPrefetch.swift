import Dispatch
import Synchronization

/// The stamps (size and modification time) of cached covers, read on another
/// core while the records are scanned, for the first scan's decisions.
///
/// Why: a restart over 100,000 cached covers spent about 15% of its CPU time
/// on one `lstat` per cover, on the coordinator's queue after the scan, while
/// the second core had little to do. The index is read before the scan, so
/// the covers to look at are known early.
///
/// Stamps are kept by the row's number in the index's load order (the number
/// `SyncPlanner.remember` returns and `PersistedRows.claimNumbered` reports),
/// not by id: 16 bytes a row in the table; only the batches waiting for their
/// reads hold the covers' names (`CoverFileNames`). Each stamp serves one
/// decision at most, and only when it shows the file as the index expects;
/// anything else is asked of the disk again. Those not taken are dropped
/// when the first scan completes, and every later check asks the disk. So
/// the only difference a stamp read ahead can make is a file changed between
/// its read and the decision (at most the start-up's length), the same kind
/// of window any check leaves before the next.
///
/// Threading: rows are submitted, in load order, before any `take`; reads run
/// on the prefetch queue; the table's lock is taken last (inside the
/// coordinator's state lock, never the other way), and never around a lookup.
final class CoverStampPrefetch: Sendable {
    private let store: CoverStore
    private let queue: DispatchQueue
    private let table = Mutex(Table())
    /// Rows stamped per read: few enough to start early, many enough to cost one lock each.
    private static let batchSize = 2048

    private struct Table {
        var stamps: [Packed] = []
        /// Set at the end of the first scan: from then on nothing is read or handed out.
        var dropped = false
    }

    /// A stamp in 16 bytes; a negative size marks a row not read yet, taken, or without a file.
    private struct Packed {
        var bytes: Int64
        var mtime: Int64
        static let unread = Packed(bytes: -1, mtime: 0)
        static let taken = Packed(bytes: -2, mtime: 0)
        static let absent = Packed(bytes: -3, mtime: 0)
    }

    /// - Parameter queue: where the reads run (a test may hold it suspended).
    init(store: CoverStore, queue: DispatchQueue = DispatchQueue(label: "coverd.stamps")) {
        self.store = store
        self.queue = queue
    }

    /// Loads every index row into `planner` (what the index remembers), in the
    /// index's order, and has the covers of the cached ones stamped ahead in
    /// batches meanwhile.
    func readAhead(_ index: CoverIndex, into planner: inout SyncPlanner) throws(IndexError) {
        var batch = Batch()
        try index.forEachRow(expecting: { count in
            planner.expectRows(count)
            table.withLock { $0.stamps.reserveCapacity(count) }
        }) { row in
            let loaded = planner.remember(row)
            if row.state == .cached { batch.append(loaded, row.id) }
            if batch.loaded.count == Self.batchSize {
                read(batch)
                batch = Batch()
            }
        }
        read(batch)
    }

    /// Rows to stamp: their numbers in the load order, and their covers' names.
    struct Batch {
        var loaded: [UInt32] = []
        var names = CoverFileNames()

        init() {
            loaded.reserveCapacity(CoverStampPrefetch.batchSize)
            names.reserveCapacity(CoverStampPrefetch.batchSize)
        }

        init(_ rows: [(loaded: Int, id: AlbumID)]) {
            rows.forEach { append($0.loaded, $0.id) }
        }

        mutating func append(_ loaded: Int, _ id: AlbumID) {
            self.loaded.append(UInt32(loaded))  // Row numbers: far below 2³², as `PersistedRows`' offsets are.
            names.append(id)
        }
    }

    /// Stamps the covers of `rows` (numbered in load order) on the prefetch queue (for tests).
    func read(_ rows: [(loaded: Int, id: AlbumID)]) {
        read(Batch(rows))
    }

    func read(_ batch: Batch) {
        guard let last = batch.loaded.max().map(Int.init) else { return }
        let open = table.withLock { table -> Bool in
            guard !table.dropped else { return false }
            if table.stamps.count <= last { table.stamps += repeatElement(.unread, count: last + 1 - table.stamps.count) }
            return true
        }
        guard open else { return }
        queue.async { [self] in
            var names = batch.names
            // Rows a decision already asked for are not looked at twice; none once the start-up is over.
            let going = table.withLock { table in
                guard !table.dropped else { return false }
                for (index, loaded) in batch.loaded.enumerated()
                where table.stamps[Int(loaded)].bytes != Packed.unread.bytes {
                    names.skip(index)
                }
                return true
            }
            guard going else { return }
            let found = store.stamps(of: names)
            table.withLock { table in
                guard !table.dropped else { return }
                // A row already asked for stays taken: its decision was made on the disk's word. A row
                // skipped above was not unread then, and no row becomes unread again (only `drop` resets
                // the table, and it marks it dropped), so its nil is never written as absent.
                for (number, stamp) in zip(batch.loaded, found) {
                    let loaded = Int(number)
                    guard table.stamps[loaded].bytes == Packed.unread.bytes else { continue }
                    table.stamps[loaded] = stamp.map { Packed(bytes: Int64($0.bytes), mtime: $0.mtime) } ?? .absent
                }
            }
        }
    }

    /// The stamp read ahead for the row loaded `loaded`-th, handed out once;
    /// nil when none was read (yet), the file was not there, the stamp was
    /// taken already, or the table was dropped.
    func take(_ loaded: Int) -> FileStamp? {
        table.withLock { table -> FileStamp? in
            guard loaded >= 0, loaded < table.stamps.count else { return nil }
            let packed = table.stamps[loaded]
            table.stamps[loaded] = .taken
            return packed.bytes >= 0 ? FileStamp(bytes: Int(packed.bytes), mtime: packed.mtime) : nil
        }
    }

    /// Forgets every stamp not taken; reads still queued do nothing, and one
    /// already running finishes its lookups but keeps nothing.
    func drop() {
        table.withLock { table in
            table = Table()
            table.dropped = true
        }
    }

    /// Blocks until the reads submitted so far are done (for tests).
    func waitUntilIdle() {
        queue.sync {}
    }

    /// Whether the first scan's end dropped the table (for tests).
    var isDropped: Bool {
        table.withLock { $0.dropped }
    }
}
