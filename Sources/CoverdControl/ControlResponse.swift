import CoverdModel

/// What the daemon sends back on a control connection.
public enum ControlResponse: Sendable, Equatable {
    /// The covers of `count` albums are being refreshed.
    case refreshed(count: Int)
    /// Ids no album in the records has; nothing was changed.
    case unknown([AlbumID])
    /// The daemon's progress (for `follow`).
    case progress(FollowUpdate)
    /// The daemon is stopping; the connection closes after this.
    case stopping
    /// The request was refused or could not be read; the connection closes after this.
    case error(String)
}
