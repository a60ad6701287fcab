import Foundation
import CoverdModel

extension CoverIndex {
    /// `coverd refresh` while no daemon runs (the caller holds the cache's
    /// `CacheLock`): marks the covers of `ids`, or of every album in the
    /// records with `all`, to be revalidated (or erased) at the next start.
    /// Returns the ids the index does not know; when there are any, nothing
    /// is changed. An erase already asked for is not weakened to a revalidation.
    public func markForRefresh(_ ids: [AlbumID], all: Bool, mark: RefreshMark, now: Date = Date()) throws(IndexError) -> [AlbumID] {
        var known: [AlbumID: IndexRow] = [:]
        for row in try rows() where row.removedAt == nil { known[row.id] = row }
        let unknown = ids.filter { known[$0] == nil }
        guard unknown.isEmpty else { return unknown }
        let chosen = all ? Array(known.keys) : ids
        var changes: [IndexChange] = []
        for id in Set(chosen).sorted() {
            guard var row = known[id], row.refresh != .erase, row.refresh != mark else { continue }
            row.refresh = mark
            row.updatedAt = now
            changes.append(.upsert(row))
        }
        try apply(changes)
        return []
    }
}
