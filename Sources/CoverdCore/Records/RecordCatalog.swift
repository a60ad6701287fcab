/// The same album id found in more than one place; `kept` wins, `ignored` is skipped.
public struct DuplicateAlbum: Sendable, Equatable {
    public var id: AlbumID
    public var kept: String
    public var ignored: String
}

/// The net difference a catalog update (or a batch of them) made to the
/// effective album set: for each touched id, the album before and after.
/// Folding changes in order keeps the net effect, so an album removed and
/// added back in one batch (a rename) is no change at all.
///
/// A full scan begun on an empty catalog (the first one) keeps only the ids
/// that appeared, as their first album, and `keepWinners` replaces each by
/// the album finally in effect: the same albums in the same order as the
/// per-id form, without its table, which at 100,000 albums cost 8 MB at the
/// daemon's memory peak.
public struct CatalogChange: Sendable, Equatable {
    private var order: [AlbumID] = []
    private var entries: [AlbumID: Transition] = [:]
    /// The additions form: one album per id that appeared, in order of appearance.
    private var additions: [Album]?
    /// In the additions form: an id went away, so it may have appeared twice.
    private var additionsRemovedSome = false
    private var additionsResolved = false
    public var duplicates: [DuplicateAlbum] = []

    struct Transition: Sendable {
        var before: Album?
        var after: Album?
    }

    public init() {}

    /// A change in the additions form, for a full scan of a catalog that is
    /// empty now; the scan calls `keepWinners` when it is done.
    static func additionsToEmptyCatalog() -> CatalogChange {
        var change = CatalogChange()
        change.additions = []
        return change
    }

    /// Albums that are new or whose effective record changed (content or file).
    public var upserted: [Album] {
        if let additions { return additions }
        return order.compactMap { id in
            guard let entry = entries[id], let after = entry.after, after != entry.before else { return nil }
            return after
        }
    }

    public var removed: [Album] {
        order.compactMap { id in
            guard let entry = entries[id], entry.after == nil else { return nil }
            return entry.before
        }
    }

    public var isEmpty: Bool { upserted.isEmpty && removed.isEmpty && duplicates.isEmpty }

    /// Equal when the net effect is: the same upserts, removals and duplicates.
    public static func == (lhs: CatalogChange, rhs: CatalogChange) -> Bool {
        lhs.upserted == rhs.upserted && lhs.removed == rhs.removed && lhs.duplicates == rhs.duplicates
    }

    /// Ends the additions form: each id's album becomes the one in effect
    /// (`effective` is the catalog's lookup), ids no longer in effect go.
    mutating func keepWinners(_ effective: (AlbumID) -> Album?) {
        guard let added = additions, !additionsResolved else { return }
        var kept = added.compactMap { effective($0.id) }
        if additionsRemovedSome {
            var seen: Set<AlbumID> = []
            kept = kept.filter { seen.insert($0.id).inserted }
        }
        additions = kept
        additionsResolved = true
    }

    mutating func record(_ id: AlbumID, before: Album?, after: Album?) {
        if additions != nil {
            assert(!additionsResolved, "a change recorded after keepWinners")
            if after == nil {
                additionsRemovedSome = true
            } else if before == nil, let after {
                additions?.append(after)  // First appearance (or a return after a removal).
            }
            // Otherwise a later file overrode the winner: keepWinners reads the final one.
            return
        }
        if var entry = entries[id] {
            entry.after = after
            entries[id] = entry
        } else {
            order.append(id)
            entries[id] = Transition(before: before, after: after)
        }
    }

    public mutating func merge(_ other: CatalogChange) {
        // Only the scan makes the additions form, and it never merges one into another.
        assert(other.additions == nil, "merging a change in the additions form")
        for id in other.order {
            guard let transition = other.entries[id] else { continue }
            record(id, before: transition.before, after: transition.after)
        }
        duplicates += other.duplicates
    }
}

/// Which albums each record file holds, and which album wins when an id appears twice.
///
/// The rule is deterministic and independent of the order files were read:
/// the file whose path sorts first wins, and within a file the first entry.
/// Not thread-safe: owned by the watcher's queue.
public struct RecordCatalog: Sendable {
    private var files: [String: [AlbumID: Album]] = [:]  // first entry per id
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
        guard files[path] != nil else { return add(path: path, albums: albums, into: &change) }
        var seen: [AlbumID: Album] = [:]
        for album in albums {
            if let first = seen[album.id] {
                change.duplicates.append(DuplicateAlbum(id: album.id, kept: "\(path): \(first.position)", ignored: "\(path): \(album.position)"))
                continue
            }
            seen[album.id] = album
        }
        let oldIDs = Set((files[path] ?? [:]).keys)
        files[path] = seen
        for id in oldIDs where seen[id] == nil { unclaim(id, path: path) }
        for id in seen.keys where !oldIDs.contains(id) { claim(id, path: path) }
        // File order first, then the albums the file no longer holds: changes come out in a stable order.
        var touched = albums.map(\.id).filter { seen[$0] != nil }
        touched += oldIDs.filter { seen[$0] == nil }.sorted()
        var settled: Set<AlbumID> = []
        for id in touched where settled.insert(id).inserted {
            settle(id, into: &change, reportDuplicateFor: seen[id] != nil && !oldIDs.contains(id) ? path : nil)
        }
    }

    /// `update` for a file the catalog does not hold (every file of the first
    /// scan): the same changes in the same order, with one lookup per album
    /// in each table where the general rules take a dozen, which made this
    /// the longest single-threaded stretch of a restart over 100,000 albums.
    /// An id that another file holds too goes by the general rules.
    private mutating func add(path: String, albums: [Album], into change: inout CatalogChange) {
        var seen: [AlbumID: Album] = [:]
        seen.reserveCapacity(albums.count)
        var firsts: [Album] = []
        firsts.reserveCapacity(albums.count)
        for album in albums {
            if let first = seen.updateValue(album, forKey: album.id) {
                seen[album.id] = first
                change.duplicates.append(DuplicateAlbum(id: album.id, kept: "\(path): \(first.position)", ignored: "\(path): \(album.position)"))
            } else {
                firsts.append(album)
            }
        }
        files[path] = seen
        for album in firsts {
            if Self.holdAlone(&entries[album.id, default: Entry()], path: path, album: album) {
                change.record(album.id, before: nil, after: album)
            } else {
                claim(album.id, path: path)
                settle(album.id, into: &change, reportDuplicateFor: path)
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
        for id in albums.keys {
            unclaim(id, path: path)
            settle(id, into: &change, reportDuplicateFor: nil)
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
    private mutating func settle(_ id: AlbumID, into change: inout CatalogChange, reportDuplicateFor path: String?) {
        let winner = entries[id]?.firstHolder.flatMap { files[$0]?[id] }
        let before = entries[id]?.winner
        if let path, let second = laterHolders[id]?.first, let winner {
            let loser = path == winner.record ? second : path
            let loserPosition = files[loser]?[id]?.position ?? ""
            change.duplicates.append(
                DuplicateAlbum(id: id, kept: "\(winner.record): \(winner.position)", ignored: "\(loser): \(loserPosition)"))
        }
        if let winner { entries[id]?.winner = winner } else { entries[id] = nil }
        guard before != winner else { return }
        change.record(id, before: before, after: winner)
    }
}
