import CoverdModel

/// What `coverd refresh` asks of the covers (contract §8): those of `ids`,
/// or of every album with `all`, revalidated now or erased and fetched anew.
public struct RefreshRequest: Sendable, Equatable {
    public var ids: [AlbumID]
    public var all: Bool
    public var mark: RefreshMark

    public init(ids: [AlbumID], all: Bool, mark: RefreshMark) {
        self.ids = ids
        self.all = all
        self.mark = mark
    }
}

/// How a refresh went.
public enum RefreshResult: Sendable, Equatable {
    /// The covers of `count` albums are being revalidated or fetched anew.
    case refreshed(count: Int)
    /// Ids no album in the records has; nothing was changed.
    case unknown([AlbumID])
}

/// Acts on `coverd refresh` in a running daemon (the coordinator); the
/// control channel calls it. `reply` is called once, on an unspecified thread.
public protocol CoverRefreshing: Sendable {
    func refresh(_ request: RefreshRequest, reply: @escaping @Sendable (RefreshResult) -> Void)
}
