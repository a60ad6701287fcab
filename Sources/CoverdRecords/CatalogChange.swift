import CoverdModel

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
/// per-id form, without its table, which would be held at the daemon's
/// memory peak.
public struct CatalogChange: Sendable, Equatable {
    private var order: [AlbumID] = []
    private var entries: [AlbumID: Transition] = [:]
    /// The additions form: one album per id that appeared, in order of appearance.
    private var additions: [Album]?
    /// In the additions form: an id went away, so it may have appeared twice.
    private var additionsRemovedSome = false
    private var additionsResolved = false
    public var duplicates: [DuplicateAlbum] = []

    /// One id's album before the first change recorded and after the last.
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
