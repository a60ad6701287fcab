import CoverdFetch
import CoverdModel
import Synchronization

/// The fetcher, awaited: a lookup's requests go through the same transfer
/// thread and connection reuse as covers. A request ends with its task: a
/// cancelled task cancels its transfer, and one cancelled already sends none.
final class AwaitedFetcher: Sendable {
    let fetcher: any CoverFetching
    /// Ids for the lookup's own transfers: the high bit set, so that they never meet the planner's.
    private let nextID = Atomic<UInt64>(1 << 63)

    init(fetcher: any CoverFetching) {
        self.fetcher = fetcher
    }

    /// A cover's body, held against the fetcher's budget until `bodyConsumed(bytes:)` like any fetched cover.
    func get(_ url: CoverURL) async -> Result<FetchedBody, FetchFailure> {
        await fetch(url, purpose: .cover)
    }

    /// A small answer (a web service's JSON), started at once: its caller paces it.
    func answer(_ url: CoverURL, limit: Int) async -> Result<FetchedBody, FetchFailure> {
        await fetch(url, purpose: .answer(limit: limit))
    }

    /// A lookup never revalidates, so a 304 (which only a revalidation gets) is a failure here.
    private func fetch(_ url: CoverURL, purpose: FetchPurpose) async -> Result<FetchedBody, FetchFailure> {
        switch await outcome(url, purpose: purpose) {
        case .success(let body): return .success(body)
        case .failure(let failure): return .failure(failure)
        case .notModified: return .failure(FetchFailure(kind: .other, message: "HTTP 304 to a request that asked for no revalidation"))
        }
    }

    private func outcome(_ url: CoverURL, purpose: FetchPurpose) async -> FetchOutcome {
        guard !Task.isCancelled else { return .failure(FetchFailure(kind: .cancelled, message: "cancelled")) }
        let id = FetchID(nextID.add(1, ordering: .relaxed).newValue)
        let fetcher = self.fetcher
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                // `completion` is called exactly once per fetch (CoverFetching), as a continuation must be resumed.
                fetcher.fetch(id, url: url, purpose: purpose) { continuation.resume(returning: $0) }
                // A cancel that came before the fetch was queued found nothing to cancel; the
                // fetcher's commands are in order, so this one lands after the start.
                if Task.isCancelled { fetcher.cancel(id) }
            }
        } onCancel: {
            fetcher.cancel(id)
        }
    }
}
