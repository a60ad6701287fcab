import Foundation

// The messages of the bus, grouped by who posts them. Each is a small value:
// observers get a copy and never a reference into another part's state.

// MARK: Posted by the record watcher

/// Albums that are new or whose record changed: the coordinator makes sure each has its cover.
public struct AlbumsUpdated: BusMessage {
    public var albums: [Album]
    public init(albums: [Album]) { self.albums = albums }
}

/// Albums whose records are gone: their covers leave the cache and any download stops.
public struct AlbumsWithdrawn: BusMessage {
    public var albums: [Album]
    public init(albums: [Album]) { self.albums = albums }
}

/// An album in a record that was rejected; its siblings still load.
public struct RecordRejected: BusMessage {
    public var rejection: RecordRejection
    public init(rejection: RecordRejection) { self.rejection = rejection }
}

/// A record file that could not be used at all.
public struct RecordFileFailed: BusMessage {
    public var error: RecordFileError
    public init(error: RecordFileError) { self.error = error }
}

/// The same album id in two places; the first path in sort order wins.
public struct DuplicateAlbumFound: BusMessage {
    public var duplicate: DuplicateAlbum
    public init(duplicate: DuplicateAlbum) { self.duplicate = duplicate }
}

/// A full pass over the records directory finished.
public struct RecordScanCompleted: BusMessage {
    public enum Reason: String, Sendable {
        /// The first scan at start; albums known to the index but not seen now were deleted meanwhile.
        case startup
        /// After an inotify queue overflow.
        case overflow
        /// On SIGHUP.
        case reload
    }

    public var reason: Reason
    public var albumCount: Int
    public var fileCount: Int
    /// Every album id the records hold after the scan; nil after the
    /// `startup` scan, where nothing needs them (albums the index knows and
    /// the records do not are the index rows no album claimed).
    public var albumIDs: Set<AlbumID>?
    /// Record files and directories that exist but could not be read: the
    /// albums they held before are kept, not removed.
    public var unreadable: Set<String>

    public init(reason: Reason, albumCount: Int, fileCount: Int, albumIDs: Set<AlbumID>?, unreadable: Set<String> = []) {
        self.reason = reason
        self.albumCount = albumCount
        self.fileCount = fileCount
        self.albumIDs = albumIDs
        self.unreadable = unreadable
    }

    /// Whether `record` is, or lies under, an unreadable path.
    public func isUnreadable(_ record: String) -> Bool {
        unreadable.contains(record) || unreadable.contains { record.hasPrefix($0 + "/") }
    }
}

/// Record files or directories that were deleted or moved away. Albums
/// known only from the index (their file could not be read) go with them.
public struct RecordFilesRemoved: BusMessage {
    public var paths: [String]
    public init(paths: [String]) { self.paths = paths }
}

// MARK: Posted by the coordinator

/// Albums that the index did not know before, from one batch of records.
public struct AlbumsAdded: BusMessage {
    public var albums: [Album]
}

/// An album whose record went away; it left the index and the cache.
public struct AlbumRemoved: BusMessage {
    public var id: AlbumID
    public var record: String
    public var coverURL: String
}

/// A cover stored in the cache.
public struct CoverCached: BusMessage {
    public var album: Album
    public var path: String
    public var bytes: Int
    public var httpStatus: Int?
    public var duration: Duration
}

/// A cover that could not be fetched or stored.
public struct CoverFailed: BusMessage {
    public var album: Album
    public var reason: String
    public var httpStatus: Int?
    public var duration: Duration?
    /// True when the album is now `failed`; false when it stays `pending` for a retry.
    public var permanent: Bool
    public var attempt: Int
    public var retryAt: Date?
}

/// Covers whose retry came while the disk was still too full for them: none
/// was downloaded, and each is looked at again at `retryAt`. One message per
/// such wake-up, however many covers wait, so a long-full disk is not a flood.
public struct CoversWaitingForRoom: BusMessage {
    public var count: Int
    /// The most one of them needed: the room that would let at least it through.
    public var largestBytes: Int
    public var retryAt: Date
}

/// Covers the daemon held as cached that were found missing or corrupt on
/// the disk (by the check after the first scan, or on reload), from one
/// decision step; each is fetched again.
public struct CachedCoversLost: BusMessage {
    public struct Cover: Sendable {
        public var album: Album
        public var path: String
        /// Says what was wrong, as the index's error does: "cached cover was missing".
        public var reason: String
    }

    public var covers: [Cover]
}

/// The check after the first scan has begun: `count` covers the index lists
/// as cached are to be looked at on the disk (`CachedCoversChecked` follows,
/// unless the daemon stops first).
public struct CachedCoversCheckStarted: BusMessage {
    public var count: Int
}

/// The check after the first scan is done: every cover that scan took as
/// cached on the index's word and the planner still held as cached (`compared`)
/// was looked at on the disk, and `lost` of them are fetched again.
public struct CachedCoversChecked: BusMessage {
    public var compared: Int
    public var lost: Int
    public var duration: Duration
}

/// The counts behind `status` and systemd's `STATUS=` line.
public struct SyncSummary: Sendable, Equatable {
    public var albums: Int
    public var cached: Int
    public var pending: Int
    public var failed: Int

    public init(albums: Int = 0, cached: Int = 0, pending: Int = 0, failed: Int = 0) {
        self.albums = albums
        self.cached = cached
        self.pending = pending
        self.failed = failed
    }

    /// `<N> albums: <C> cached, <P> pending, <F> failed`, the contract's STATUS= format.
    public var line: String { "\(albums) albums: \(cached) cached, \(pending) pending, \(failed) failed" }
}

/// The summary changed. Posted after every batch of state changes.
public struct SyncProgress: BusMessage {
    public var summary: SyncSummary
    public init(summary: SyncSummary) { self.summary = summary }
}

// MARK: Posted by the daemon

/// A step in the daemon's life, for the journal and for systemd.
public struct LifecycleChanged: BusMessage {
    public enum Phase: String, Sendable {
        case started, ready, reloading, stopping
    }

    public var phase: Phase
    public var detail: String

    public init(_ phase: Phase, detail: String = "") {
        self.phase = phase
        self.detail = detail
    }
}

/// SIGHUP: re-read the configuration, rescan records, retry failed covers.
public struct ReloadRequested: BusMessage {
    public var configuration: Configuration
    public init(configuration: Configuration) { self.configuration = configuration }
}

// MARK: Posted by anyone

/// Something went wrong that is not about one album: the index could not be
/// written, a new configuration could not be applied. `severity` says how
/// much it matters (a note about cleaned-up leftovers is not an error).
public struct OperationFailed: BusMessage {
    public enum Severity: Sendable {
        case notice, warning, error
    }

    public var operation: String
    public var error: String
    public var severity: Severity

    public init(operation: String, error: String, severity: Severity = .error) {
        self.operation = operation
        self.error = error
        self.severity = severity
    }
}

/// How the cache makes each cover durable before renaming it into place,
/// decided once from its filesystem (`FlushBatcher`): told at start, since it
/// explains a sync's speed (one `fsync` per cover costs far more than one
/// `syncfs` per batch).
public struct CacheDurabilityChosen: BusMessage {
    /// The covers' directory (`covers/` under the cache directory).
    public var directory: String
    /// The method and the filesystem that decided it, worded for the log: "one syncfs per batch (XFS)".
    public var method: String

    public init(directory: String, method: String) {
        self.directory = directory
        self.method = method
    }
}
