import CoverdCache
import CoverdModel

/// The albums the planner tracks, by id, with the counts behind
/// `SyncSummary` and, once first asked for, the albums whose cover of each
/// URL is cached (a new album with such a URL gets a copy, not a download).
///
/// `setState` is the only place an album's state changes, so the counts and
/// the cached-by-URL list stay exact: an entry taken out, changed and put
/// back with `store` keeps the state `setState` gave it.
struct TrackedAlbums {
    private var entries: [AlbumID: TrackedAlbum] = [:]
    private(set) var summary = SyncSummary()
    /// Built the first time an album needs a cover (nil until then): a
    /// restart over a fully cached library never needs it.
    private var cachedByURL: [CoverURL: AlbumIDGroup]?

    subscript(id: AlbumID) -> TrackedAlbum? { entries[id] }

    mutating func reserveCapacity(_ count: Int) {
        entries.reserveCapacity(count)
    }

    /// A new album's entry, pending and counted; the caller decides on it, then `store`s it.
    mutating func start(_ album: Album) -> TrackedAlbum {
        adjust(.pending, by: 1)
        return TrackedAlbum(album: album, state: .pending)
    }

    /// Puts an entry (back) in the table.
    mutating func store(_ entry: TrackedAlbum) {
        entries[entry.album.id] = entry
    }

    /// Forgets an album, uncounting it.
    mutating func remove(_ id: AlbumID) -> TrackedAlbum? {
        guard var entry = entries.removeValue(forKey: id) else { return nil }
        setState(&entry, .pending)
        adjust(.pending, by: -1)
        return entry
    }

    /// The ids of the albums `include` picks, in no particular order.
    func ids(where include: (TrackedAlbum) -> Bool) -> [AlbumID] {
        entries.compactMap { include($0.value) ? $0.key : nil }
    }

    mutating func setState(_ entry: inout TrackedAlbum, _ state: CoverState) {
        guard entry.state != state else { return }
        if cachedByURL != nil {
            let url = entry.album.coverURL
            if entry.state == .cached {
                cachedByURL?[url]?.remove(entry.album.id)
                if cachedByURL?[url]?.isEmpty == true { cachedByURL?[url] = nil }
            }
            if state == .cached, cachedByURL?[url]?.insert(entry.album.id) == nil {
                cachedByURL?[url] = AlbumIDGroup(entry.album.id)
            }
        }
        adjust(entry.state, by: -1)
        adjust(state, by: 1)
        entry.state = state
    }

    /// The albums whose cover of `url` is cached, sorted.
    mutating func cachedCopies(of url: CoverURL) -> [AlbumID] {
        if cachedByURL == nil {
            var map: [CoverURL: AlbumIDGroup] = [:]
            for (id, entry) in entries where entry.state == .cached {
                if map[entry.album.coverURL]?.insert(id) == nil { map[entry.album.coverURL] = AlbumIDGroup(id) }
            }
            cachedByURL = map
        }
        return cachedByURL?[url]?.sorted ?? []
    }

    private mutating func adjust(_ state: CoverState, by delta: Int) {
        switch state {
        case .cached: summary.cached += delta
        case .pending: summary.pending += delta
        case .failed: summary.failed += delta
        }
        summary.albums += delta
    }
}
