import Foundation
import CoverdModel
import CoverdSync

/// How `coverd sync` ended: the counts, the albums not cached because they
/// failed (or that it gave up waiting for), and the signal that cut it short.
public struct SyncOutcome: Sendable, Equatable {
    public var summary: SyncSummary
    /// Every album failed, or pending after a failed attempt, sorted by id.
    public var failures: [AlbumFailure]
    /// Of the pending ones, those sync stopped waiting for (`SyncPatience`).
    public var givenUp: Set<AlbumID>
    /// SIGINT, SIGTERM or SIGHUP, when one stopped the sync before it was done.
    public var signal: Int32?
    public var duration: Duration

    public init(summary: SyncSummary, failures: [AlbumFailure], givenUp: Set<AlbumID>, signal: Int32?, duration: Duration) {
        self.summary = summary
        self.failures = failures
        self.givenUp = givenUp
        self.signal = signal
        self.duration = duration
    }

    /// The albums to list as not cached: failed, or given up while still failing.
    public var listed: [AlbumFailure] {
        failures.filter { $0.state == .failed || givenUp.contains($0.album.id) }
    }

    /// 0 when every album is cached; 128 + the signal's number when one
    /// stopped it (as a shell reports a process the signal killed); 1 otherwise.
    public var exitStatus: Int32 {
        if let signal { return 128 + signal }
        return summary.cached == summary.albums ? 0 : 1
    }
}
