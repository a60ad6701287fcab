import CoverdBase

/// When failed covers are tried again.
public struct RetryPolicy: Sendable, Equatable {
    /// The first backoff for transient failures; it doubles with each attempt.
    public var initialDelay: Duration = .seconds(1)
    /// Backoff never exceeds this.
    public var maxDelay: Duration = .seconds(3600)
    /// Albums marked failed are tried again after this.
    public var failedInterval: Duration = .seconds(86_400)
    /// Failures to write the cache (a full disk) are retried at least this often.
    public var storageMaxDelay: Duration = .seconds(30)
    /// An album whose lookup found nothing is looked up again after about
    /// this (`sources.recheck_interval`), spread by a tenth either way.
    public var lookupRecheck: Duration = .seconds(604_800)

    public init() {}
}
