import CoverdFetch
import CoverdModel
import Synchronization

/// The fetcher, awaited: a lookup's requests go through the same transfers,
/// limits and connection reuse as covers. A request ends with its task: a
/// cancelled task cancels its transfer.
final class AwaitedFetcher: Sendable {
    let fetcher: any CoverFetching
    /// Ids for the lookup's own transfers: the high bit set, so that they never meet the planner's.
    private let nextID = Atomic<UInt64>(1 << 63)

    init(fetcher: any CoverFetching) {
        self.fetcher = fetcher
    }

    /// A body, held against the fetcher's budget until `bodyConsumed()` like any fetched cover.
    func get(_ url: CoverURL, limit: Int? = nil) async -> FetchOutcome {
        let id = FetchID(nextID.add(1, ordering: .relaxed).newValue)
        let fetcher = self.fetcher
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                // `completion` is called exactly once per fetch (CoverFetching), as a continuation must be resumed.
                fetcher.fetch(id, url: url, limit: limit) { continuation.resume(returning: $0) }
            }
        } onCancel: {
            fetcher.cancel(id)
        }
    }

    /// A small answer (a web service's JSON), its bytes copied out and its
    /// budget given back at once.
    func answer(_ url: CoverURL, limit: Int) async -> Result<[UInt8], FetchFailure> {
        switch await get(url, limit: limit) {
        case .success(let body):
            fetcher.bodyConsumed()
            return .success(body.bytes)
        case .failure(let failure):
            return .failure(failure)
        }
    }
}
