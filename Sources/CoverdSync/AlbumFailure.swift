import Foundation
import CoverdModel

/// An album whose cover is not cached because its last attempt failed:
/// `failed` for good (until its next try), or still `pending` and retried
/// with backoff. What `coverd sync` waits on, gives up on and lists.
public struct AlbumFailure: Sendable, Equatable {
    public var album: Album
    /// `.failed` or `.pending`; a pending one is retried at `nextRetry`.
    public var state: CoverState
    /// The last attempt's error, as `status` shows it.
    public var error: String
    /// Failed attempts in a row.
    public var attempts: Int
    public var nextRetry: Date?

    public init(album: Album, state: CoverState, error: String, attempts: Int, nextRetry: Date?) {
        self.album = album
        self.state = state
        self.error = error
        self.attempts = attempts
        self.nextRetry = nextRetry
    }
}
