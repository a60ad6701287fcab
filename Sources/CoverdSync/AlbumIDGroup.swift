import CoverdModel

/// Album ids sharing something (a URL), for the common case of exactly one
/// without allocating a set for it.
struct AlbumIDGroup {
    private var first: AlbumID?
    private var others: Set<AlbumID> = []

    init(_ id: AlbumID) { first = id }

    var isEmpty: Bool { first == nil && others.isEmpty }

    /// All members, sorted.
    var sorted: [AlbumID] { ((first.map { [$0] } ?? []) + others).sorted() }

    mutating func insert(_ id: AlbumID) {
        if first == nil || first == id { first = id } else { others.insert(id) }
    }

    mutating func remove(_ id: AlbumID) {
        if first == id { first = others.popFirst() } else { others.remove(id) }
    }
}
