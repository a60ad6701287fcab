import CoverdModel

/// Which albums each record file holds, and which album wins when an id appears twice.
///
/// The rule is deterministic and independent of the order files were read:
/// the file whose path sorts first wins, and within a file the first entry.
/// Not thread-safe: owned by the watcher's queue.
public struct RecordCatalog: Sendable {
    /// Per file, the first entry of each id, in file order: an array, not a
    /// table by id, which would cost memory at the start-up's peak.
    private var files: [String: [Album]] = [:]
    /// Tables by id of the files whose albums had to be looked up by id: when
    /// another file lets go of an id they hold too. Kept until the file
    /// changes or the batch ends (`releaseTables`), so that deleting a
    /// thousand files that share ids with one large file tables it once, not
    /// a thousand times, and no table outlives the batch that needed it.
    private var fileTables: [String: [AlbumID: Album]] = [:]
    /// How many times a file was tabled: for tests.
    private(set) var filesTabled = 0
    /// Per id, the file whose path sorts first among those that hold it, and
    /// the album in effect: one table rather than two, with small values,
    /// since it has a bucket for every album and more.
    ///
    /// Between calls, an id's album in effect is its first holder's entry for
    /// it: a call settles every id of each file it changes.
    private var entries: [AlbumID: Entry] = [:]
    /// The other holders, sorted, of the rare id that more than one file
    /// holds; no key without an entry that has a first holder.
    private var laterHolders: [AlbumID: [String]] = [:]

    /// An id's first holder and the album in effect.
    private struct Entry: Sendable {
        /// Nil from the moment the last holder lets go until the id is settled.
        var firstHolder: String?
        /// Nil from the moment a first holder claims the id until it is settled.
        var winner: Album?
    }

    public init() {}

    /// For the test that pins the table's size.
    static var entryStride: Int { MemoryLayout<Entry>.stride }

    #if DEBUG
    /// For tests: how the tables disagree with each other (empty when they agree).
    var inconsistencies: [String] {
        var found: [String] = []
        for (id, later) in laterHolders {
            guard let first = entries[id]?.firstHolder else {
                found.append("\(id): later holders without a first")
                continue
            }
            if later.isEmpty || later != later.sorted() || later.contains(where: { $0 <= first }) {
                found.append("\(id): later holders \(later) after \(first)")
            }
        }
        for (id, entry) in entries {
            let holders = [entry.firstHolder].compactMap { $0 } + (laterHolders[id] ?? [])
            let holding = files.filter { $0.value.contains { $0.id == id } }.keys.sorted()
            if holders != holding { found.append("\(id): holders \(holders), files \(holding)") }
            let expected = entry.firstHolder.flatMap { first in files[first]?.first { $0.id == id } }
            if entry.winner == nil || entry.winner != expected { found.append("\(id): winner not its first holder's entry") }
        }
        for (path, table) in fileTables {
            let albums = files[path] ?? []
            if table.count != albums.count || albums.contains(where: { table[$0.id] != $0 }) { found.append("\(path): a stale table") }
        }
        return found
    }
    #endif

    public var albumCount: Int { entries.count }
    public var fileCount: Int { files.count }
    public var paths: [String] { Array(files.keys) }
    public func album(_ id: AlbumID) -> Album? { entries[id]?.winner }
    public var albums: [Album] { entries.values.compactMap(\.winner) }
    public func contains(path: String) -> Bool { files[path] != nil }

    /// Replaces what `path` holds.
    public mutating func update(path: String, albums: [Album]) -> CatalogChange {
        var change = CatalogChange()
        update(path: path, albums: albums, into: &change)
        return change
    }

    /// The same, recorded straight into `change` (as `merge` would record it).
    mutating func update(path: String, albums: [Album], into change: inout CatalogChange) {
        guard let old = files[path] else { return add(path: path, albums: albums, into: &change) }
        let (seen, firsts) = Self.firstEntries(of: albums, in: path, duplicates: &change.duplicates)
        let oldIDs = Set(old.lazy.map(\.id))
        files[path] = firsts
        fileTables[path] = nil
        for id in oldIDs where seen[id] == nil { unclaim(id, path: path) }
        for album in firsts where !oldIDs.contains(album.id) { claim(album.id, path: path) }
        // File order first, then the albums the file no longer holds: changes come out in a stable order.
        var touched = albums.map(\.id).filter { seen[$0] != nil }
        touched += oldIDs.filter { seen[$0] == nil }.sorted()
        var settled: Set<AlbumID> = []
        for id in touched where settled.insert(id).inserted {
            let added = seen[id] != nil && !oldIDs.contains(id)
            settle(id, into: &change, reportDuplicateFor: added ? path : nil, changed: path, holding: seen)
        }
    }

    /// The first entry of each id in `albums`, by id and in file order; a
    /// later entry with the same id is reported as a duplicate.
    private static func firstEntries(
        of albums: [Album], in path: String, duplicates: inout [DuplicateAlbum]
    ) -> (byID: [AlbumID: Album], inOrder: [Album]) {
        var seen: [AlbumID: Album] = [:]
        seen.reserveCapacity(albums.count)
        var firsts: [Album] = []
        firsts.reserveCapacity(albums.count)
        for album in albums {
            if let first = seen.updateValue(album, forKey: album.id) {
                seen[album.id] = first
                duplicates.append(DuplicateAlbum(id: album.id, kept: "\(path): \(first.position)", ignored: "\(path): \(album.position)"))
            } else {
                firsts.append(album)
            }
        }
        return (seen, firsts)
    }

    /// `update` for a file the catalog does not hold (every file of the first
    /// scan): the same changes in the same order, with one lookup per album
    /// in each table where the general rules take a dozen: the general rules
    /// were a restart's longest single-threaded stretch (bench/HISTORY.md).
    /// An id that another file holds too goes by the general rules.
    private mutating func add(path: String, albums: [Album], into change: inout CatalogChange) {
        let (seen, firsts) = Self.firstEntries(of: albums, in: path, duplicates: &change.duplicates)
        files[path] = firsts
        fileTables[path] = nil
        for album in firsts {
            if Self.holdAlone(&entries[album.id, default: Entry()], path: path, album: album) {
                change.record(album.id, before: nil, after: album)
            } else {
                claim(album.id, path: path)
                settle(album.id, into: &change, reportDuplicateFor: path, changed: path, holding: seen)
            }
        }
    }

    /// Frees the tables made for lookups: the watcher calls this after each batch of changes.
    public mutating func releaseTables() {
        fileTables = [:]
    }

    /// Makes `path` the only holder and `album` the winner of an entry that
    /// did not exist (the empty default); false, changing nothing, otherwise.
    /// Between calls every entry has a winner, so an empty one is a new id.
    private static func holdAlone(_ entry: inout Entry, path: String, album: Album) -> Bool {
        guard entry.firstHolder == nil, entry.winner == nil else { return false }
        entry = Entry(firstHolder: path, winner: album)
        return true
    }

    /// Forgets `path`, as when its file was deleted or moved away.
    public mutating func remove(path: String) -> CatalogChange {
        guard let albums = files.removeValue(forKey: path) else { return CatalogChange() }
        fileTables[path] = nil
        var change = CatalogChange()
        for album in albums {
            unclaim(album.id, path: path)
            settle(album.id, into: &change, reportDuplicateFor: nil, changed: path, holding: [:])
        }
        return change
    }

    /// Forgets every file under `directory` (a directory deleted or moved away).
    public mutating func remove(under directory: String) -> CatalogChange {
        let prefix = directory.hasSuffix("/") ? directory : directory + "/"
        var change = CatalogChange()
        // Last path first: a file that goes before another holder of its ids
        // promotes (and tables) none of the files about to go with it.
        for path in files.keys.filter({ $0.hasPrefix(prefix) }).sorted(by: >) {
            change.merge(remove(path: path))
        }
        return change
    }

    /// Adds `path` to the holders of `id`, in path order.
    private mutating func claim(_ id: AlbumID, path: String) {
        guard let first = entries[id]?.firstHolder else {
            // No holder: nothing in `laterHolders` either.
            if entries[id] == nil { entries[id] = Entry(firstHolder: path) } else { entries[id]?.firstHolder = path }
            return
        }
        var later = laterHolders[id] ?? []
        guard path != first, !later.contains(path) else { return }
        if path < first {
            later.insert(first, at: 0)
            entries[id]?.firstHolder = path
        } else {
            later.insert(path, at: later.firstIndex(where: { $0 > path }) ?? later.count)
        }
        laterHolders[id] = later
    }

    /// Removes `path` from the holders of `id`; the next one in path order becomes first.
    private mutating func unclaim(_ id: AlbumID, path: String) {
        guard let first = entries[id]?.firstHolder else { return }
        var later = laterHolders[id] ?? []
        if path == first {
            entries[id]?.firstHolder = later.isEmpty ? nil : later.removeFirst()
        } else {
            later.removeAll { $0 == path }
        }
        laterHolders[id] = later.isEmpty ? nil : later
    }

    /// The first entry for `id` in `path`, through the file's table (made now if need be).
    private mutating func tabled(_ id: AlbumID, in path: String) -> Album? {
        if let table = fileTables[path] { return table[id] }
        guard let albums = files[path] else { return nil }
        // Each id appears once: `files` holds the first entry per id.
        let table = Dictionary(albums.lazy.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        fileTables[path] = table
        filesTabled += 1
        return table[id]
    }

    /// Recomputes the winner for `id` and records the difference.
    /// `changed` is the file this call changed, and `holding` its albums by id.
    private mutating func settle(
        _ id: AlbumID, into change: inout CatalogChange, reportDuplicateFor path: String?,
        changed: String, holding: [AlbumID: Album]
    ) {
        let before = entries[id]?.winner
        // The album in effect is still its file's unless that file is the one
        // changed: only a holder promoted in place of another needs a lookup
        // in a file of its own. (A catalog path is its albums' `record`.)
        func album(in file: String) -> Album? {
            if file == changed { return holding[id] }
            return before?.record == file ? before : tabled(id, in: file)
        }
        let winner = entries[id]?.firstHolder.flatMap(album(in:))
        if let path, let second = laterHolders[id]?.first, let winner {
            let loser = path == winner.record ? second : path
            let lost = album(in: loser)
            change.duplicates.append(
                DuplicateAlbum(id: id, kept: "\(winner.record): \(winner.position)", ignored: "\(loser): \(lost?.position ?? "")"))
        }
        if let winner {
            entries[id]?.winner = winner
        } else {
            assert(laterHolders[id] == nil, "an id without holders left in laterHolders")
            entries[id] = nil
        }
        guard before != winner else { return }
        change.record(id, before: before, after: winner)
    }
}
