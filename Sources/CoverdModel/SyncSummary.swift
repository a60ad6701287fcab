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
