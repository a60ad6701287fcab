/// Which albums each record file holds, and which album wins when an id appears twice.
///
/// The rule is deterministic and independent of the order files were read:
/// the file whose path sorts first wins, and within a file the first entry.
/// Not thread-safe: owned by the watcher's queue.
public struct RecordCatalog: Sendable {
    /// Per file, the first entry of each id, in file order: an array, not a
    /// table by id (4 MB less at 100,000 albums); `FileLookup` makes a table
    /// of a file when an update needs one.
    private var files: [String: [Album]] = [:]
    /// Per id, the file whose path sorts first among those that hold it, and
    /// the album in effect: one table rather than two, 16-byte values rather
    /// than 40, since at 100,000 albums it has 262,144 buckets.
    private var entries: [AlbumID: Entry] = [:]
    /// The other holders, sorted, of the rare id that more than one file holds.
    private var laterHolders: [AlbumID: [String]] = [:]

    private struct Entry: Sendable {
        /// Nil from the moment the last holder lets go until the id is settled.
        var firstHolder: String?
        /// Nil from the moment a first holder claims the id until it is settled.
        var winner: Album?
    }

    public init() {}

    /// For the test that pins the table's size.
    static var entryStride: Int { MemoryLayout<Entry>.stride }

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
        for id in oldIDs where seen[id] == nil { unclaim(id, path: path) }
        for album in firsts where !oldIDs.contains(album.id) { claim(album.id, path: path) }
        // File order first, then the albums the file no longer holds: changes come out in a stable order.
        var touched = albums.map(\.id).filter { seen[$0] != nil }
        touched += oldIDs.filter { seen[$0] == nil }.sorted()
        var settled: Set<AlbumID> = []
        var lookup = FileLookup(path, seen)
        for id in touched where settled.insert(id).inserted {
            settle(id, into: &change, reportDuplicateFor: seen[id] != nil && !oldIDs.contains(id) ? path : nil, lookup: &lookup)
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
    /// in each table where the general rules take a dozen, which made this
    /// the longest single-threaded stretch of a restart over 100,000 albums.
    /// An id that another file holds too goes by the general rules.
    private mutating func add(path: String, albums: [Album], into change: inout CatalogChange) {
        let (seen, firsts) = Self.firstEntries(of: albums, in: path, duplicates: &change.duplicates)
        files[path] = firsts
        var lookup = FileLookup(path, seen)
        for album in firsts {
            if Self.holdAlone(&entries[album.id, default: Entry()], path: path, album: album) {
                change.record(album.id, before: nil, after: album)
            } else {
                claim(album.id, path: path)
                settle(album.id, into: &change, reportDuplicateFor: path, lookup: &lookup)
            }
        }
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
        var change = CatalogChange()
        var lookup = FileLookup()
        for album in albums {
            unclaim(album.id, path: path)
            settle(album.id, into: &change, reportDuplicateFor: nil, lookup: &lookup)
        }
        return change
    }

    /// Forgets every file under `directory` (a directory deleted or moved away).
    public mutating func remove(under directory: String) -> CatalogChange {
        let prefix = directory.hasSuffix("/") ? directory : directory + "/"
        var change = CatalogChange()
        for path in files.keys where path.hasPrefix(prefix) {
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

    /// Recomputes the winner for `id` and records the difference.
    private mutating func settle(
        _ id: AlbumID, into change: inout CatalogChange, reportDuplicateFor path: String?, lookup: inout FileLookup
    ) {
        let winner = entries[id]?.firstHolder.flatMap { lookup.album(id, in: $0, of: files) }
        let before = entries[id]?.winner
        if let path, let second = laterHolders[id]?.first, let winner {
            let loser = path == winner.record ? second : path
            let loserPosition = lookup.album(id, in: loser, of: files)?.position ?? ""
            change.duplicates.append(
                DuplicateAlbum(id: id, kept: "\(winner.record): \(winner.position)", ignored: "\(loser): \(loserPosition)"))
        }
        if let winner { entries[id]?.winner = winner } else { entries[id] = nil }
        guard before != winner else { return }
        change.record(id, before: before, after: winner)
    }
}

/// The albums of record files by id, for one update: a table of a file is
/// made the first time the update looks into it (the updated file's comes
/// ready-made), so a file of 100,000 albums is indexed once per update, not
/// searched once per album, and no table outlives the update.
private struct FileLookup {
    private var tables: [String: [AlbumID: Album]] = [:]

    init() {}

    init(_ path: String, _ albums: [AlbumID: Album]) { tables[path] = albums }

    mutating func album(_ id: AlbumID, in path: String, of files: [String: [Album]]) -> Album? {
        if let table = tables[path] { return table[id] }
        guard let albums = files[path] else { return nil }
        // Each id appears once: `files` holds the first entry per id.
        let table = Dictionary(albums.lazy.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        tables[path] = table
        return table[id]
    }
}
