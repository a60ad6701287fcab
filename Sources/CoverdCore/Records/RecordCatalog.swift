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
/// A full scan begun on an empty catalog (the first one) keeps only the
/// albums that were added, in order, and `keepWinners` drops those a later
/// file overrode: nothing is removed in such a scan, every change is an
/// addition, and at 100,000 albums the per-id transitions cost 8 MB at the
/// daemon's memory peak.
public struct CatalogChange: Sendable, Equatable {
    private var order: [AlbumID] = []
    private var entries: [AlbumID: Transition] = [:]
    private var additions: [Album]?
    public var duplicates: [DuplicateAlbum] = []

    struct Transition: Sendable, Equatable {
        var before: Album?
        var after: Album?
    }

    public init() {}

    /// A change for a full scan of a catalog that is empty now: see `keepWinners`.
    init(fromEmptyCatalog: Bool) {
        if fromEmptyCatalog { additions = [] }
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

    /// For a change begun on an empty catalog: keeps, of the albums added,
    /// those still in effect (`effective` is the catalog's lookup), each once.
    mutating func keepWinners(_ effective: (AlbumID) -> Album?) {
        guard let added = additions else { return }
        additions = nil
        var kept: [Album] = []
        kept.reserveCapacity(added.count)
        // In a scan from empty nothing is removed, so a winner is never
        // recorded twice: it is either still in effect or overridden.
        for album in added where effective(album.id) == album { kept.append(album) }
        additions = kept
    }

    mutating func record(_ id: AlbumID, before: Album?, after: Album?) {
        if additions != nil {
            if let after { additions?.append(after) }
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
    /// Per id, the files that hold it and the album in effect: one table
    /// rather than two, since at 100,000 albums each costs megabytes.
    private var entries: [AlbumID: Entry] = [:]

    private struct Entry: Sendable {
        /// Nil from the moment the last holder lets go until the id is settled.
        var holders: RecordHolders?
        /// Nil from the moment a first holder claims the id until it is settled.
        var winner: Album?
    }

    public init() {}

    public var albumCount: Int { entries.count }
    public var fileCount: Int { files.count }
    public var paths: [String] { Array(files.keys) }
    public func album(_ id: AlbumID) -> Album? { entries[id]?.winner }
    public var albums: [Album] { entries.values.compactMap(\.winner) }
    public func contains(path: String) -> Bool { files[path] != nil }

    /// Replaces what `path` holds.
    public mutating func update(path: String, albums: [Album]) -> CatalogChange {
        var change = CatalogChange()
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
        return change
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

    private mutating func claim(_ id: AlbumID, path: String) {
        if entries[id] == nil {
            entries[id] = Entry(holders: RecordHolders(path))
        } else if entries[id]?.holders?.insert(path) == nil {
            entries[id]?.holders = RecordHolders(path)
        }
    }

    private mutating func unclaim(_ id: AlbumID, path: String) {
        guard var holders = entries[id]?.holders else { return }
        entries[id]?.holders = holders.remove(path) ? holders : nil
    }

    /// Recomputes the winner for `id` and records the difference.
    private mutating func settle(_ id: AlbumID, into change: inout CatalogChange, reportDuplicateFor path: String?) {
        let holders = entries[id]?.holders
        let winner = holders.flatMap { files[$0.first]?[id] }
        let before = entries[id]?.winner
        if let path, let holders, let second = holders.second, let winner {
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

/// The record paths holding one album id, sorted: the first wins. Almost
/// always there is exactly one, which needs no array of its own.
struct RecordHolders: Sendable {
    private(set) var first: String
    private var rest: [String] = []

    init(_ path: String) { first = path }

    var second: String? { rest.first }

    mutating func insert(_ path: String) {
        guard path != first, !rest.contains(path) else { return }
        if path < first {
            rest.insert(first, at: 0)
            first = path
        } else {
            rest.insert(path, at: rest.firstIndex(where: { $0 > path }) ?? rest.count)
        }
    }

    /// Removes `path`; false when no holder is left.
    mutating func remove(_ path: String) -> Bool {
        if path == first {
            guard !rest.isEmpty else { return false }
            first = rest.removeFirst()
        } else {
            rest.removeAll { $0 == path }
        }
        return true
    }
}
