import CoverdCache
import CoverdModel

/// The albums the planner tracks, by id, with the counts behind
/// `SyncSummary` and, once first asked for, the albums whose cover of each
/// job is cached (a new album with the same URL, or the same lookup, gets a
/// copy, not a download).
///
/// `setState` is the only place an album's state changes, so the counts and
/// the cached-by-URL list stay exact: an entry taken out, changed and put
/// back with `put` keeps the state `setState` gave it.
struct TrackedAlbums {
    private var entries: [AlbumID: TrackedAlbum] = [:]
    private(set) var summary = SyncSummary()
    /// Built the first time an album needs a cover (nil until then): a
    /// restart over a fully cached library never needs it.
    private var cachedByJob: [JobKey: AlbumIDGroup]?

    subscript(id: AlbumID) -> TrackedAlbum? { entries[id] }

    mutating func reserveCapacity(_ count: Int) {
        entries.reserveCapacity(count)
    }

    /// A new album's entry, pending and counted; the caller decides on it, then `put`s it.
    mutating func start(_ album: Album) -> TrackedAlbum {
        adjust(.pending, by: 1, lookup: album.coverURL == nil)
        return TrackedAlbum(album: album, state: .pending)
    }

    /// Puts an entry (back) in the table.
    mutating func put(_ entry: TrackedAlbum) {
        entries[entry.album.id] = entry
    }

    /// Gives an entry its album's new version: the count of albums waiting
    /// for a lookup follows one that gains or loses its `cover_url`. A cached
    /// entry keeps its job (`setState` it to pending before its URL changes).
    mutating func replaceAlbum(of entry: inout TrackedAlbum, with album: Album) {
        assert(entry.state != .cached || JobKey(entry.album) == JobKey(album), "a cached album's job changed")
        if entry.state == .pending, (entry.album.coverURL == nil) != (album.coverURL == nil) {
            summary.awaitingLookup += album.coverURL == nil ? 1 : -1
        }
        entry.album = album
    }

    /// Forgets an album, uncounting it.
    mutating func remove(_ id: AlbumID) -> TrackedAlbum? {
        guard var entry = entries.removeValue(forKey: id) else { return nil }
        setState(&entry, .pending)
        adjust(.pending, by: -1, lookup: entry.album.coverURL == nil)
        return entry
    }

    /// The ids of the albums `include` picks, in no particular order.
    func ids(where include: (TrackedAlbum) -> Bool) -> [AlbumID] {
        entries.compactMap { include($0.value) ? $0.key : nil }
    }

    mutating func setState(_ entry: inout TrackedAlbum, _ state: CoverState) {
        guard entry.state != state else { return }
        if cachedByJob != nil {
            let key = JobKey(entry.album)
            if entry.state == .cached {
                cachedByJob?[key]?.remove(entry.album.id)
                if cachedByJob?[key]?.isEmpty == true { cachedByJob?[key] = nil }
            }
            if state == .cached, cachedByJob?[key]?.insert(entry.album.id) == nil {
                cachedByJob?[key] = AlbumIDGroup(entry.album.id)
            }
        }
        adjust(entry.state, by: -1, lookup: entry.album.coverURL == nil)
        adjust(state, by: 1, lookup: entry.album.coverURL == nil)
        entry.state = state
    }

    /// The albums whose cover of `key` is cached, sorted.
    mutating func cachedCopies(of key: JobKey) -> [AlbumID] {
        if cachedByJob == nil {
            var map: [JobKey: AlbumIDGroup] = [:]
            for (id, entry) in entries where entry.state == .cached {
                let key = JobKey(entry.album)
                if map[key]?.insert(id) == nil { map[key] = AlbumIDGroup(id) }
            }
            cachedByJob = map
        }
        return cachedByJob?[key]?.sorted ?? []
    }

    /// `lookup`: the album has no `cover_url`, so while pending it waits for a lookup.
    private mutating func adjust(_ state: CoverState, by delta: Int, lookup: Bool) {
        switch state {
        case .cached: summary.cached += delta
        case .pending:
            summary.pending += delta
            if lookup { summary.awaitingLookup += delta }
        case .failed: summary.failed += delta
        }
        summary.albums += delta
    }
}
