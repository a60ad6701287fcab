import CoverdFetch
import CoverdLookup

/// One failed attempt at a job's cover, as the planner records it for every
/// album waiting on the job.
struct FailedAttempt {
    var message: String
    /// Permanent failures wait `failedInterval`; the others back off.
    var permanent: Bool
    /// The server's `Retry-After`, honoured within reason.
    var retryAfter: Duration?
    var httpStatus: Int?
    var duration: Duration?
    /// Writing the cache failed, not the download: retried within `storageMaxDelay`.
    var storage = false
    /// The cache's filesystem had no room: every cover waiting for room is looked at together.
    var outOfSpace = false
    /// A lookup found nothing: looked up again after `lookupRecheck`.
    var nothingFound = false

    /// A lookup that found nothing; `message` says what it tried.
    init(nothingFound message: String) {
        self.message = message
        permanent = true
        nothingFound = true
    }

    /// A download that failed.
    init(_ failure: FetchFailure) {
        message = failure.message
        permanent = !failure.isTransient
        retryAfter = failure.retryAfter
        httpStatus = failure.httpStatus
        duration = failure.duration
    }

    /// Staging that failed. A cached copy that could not be used is no
    /// failure (the URL is fetched instead), so it never comes here.
    init(_ failure: StagingFailure) {
        message = failure.message
        switch failure {
        case .sourceUnavailable, .stopped:
            preconditionFailure("an unusable cached copy is fetched again, and a stop is no failure: \(failure.message)")
        case .image:
            permanent = true
        case .storage(let error, _):
            permanent = false
            storage = true
            outOfSpace = error.isOutOfSpace
        }
    }
}
