/// The counts behind `status` and systemd's `STATUS=` line.
public struct SyncSummary: Sendable, Equatable {
    public var albums: Int
    public var cached: Int
    public var pending: Int
    public var failed: Int
    /// Of the pending albums, those whose record has no `cover_url`: they wait for a lookup.
    public var awaitingLookup: Int
    /// Of the cached albums, those whose cover is outdated (contract §8): past `freshness.max_age`, or asked to refresh.
    public var outdated: Int
    /// Cached albums whose cover is being asked again right now (contract §8); not part of `line`.
    public var revalidating = 0

    /// Whether covers are being fetched or revalidated: progress is then told at most about once a second.
    public var isBusy: Bool { pending > 0 || revalidating > 0 }

    public init(albums: Int = 0, cached: Int = 0, pending: Int = 0, failed: Int = 0, awaitingLookup: Int = 0, outdated: Int = 0) {
        self.albums = albums
        self.cached = cached
        self.pending = pending
        self.failed = failed
        self.awaitingLookup = awaitingLookup
        self.outdated = outdated
    }

    /// `<N> albums: <C> cached, <P> pending, <F> failed`, the contract's STATUS= format.
    public var line: String { "\(albums) albums: \(cached) cached, \(pending) pending, \(failed) failed" }
}
