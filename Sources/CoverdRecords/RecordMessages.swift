import CoverdBase
import CoverdModel

// The messages the record watcher posts on the bus. Each is a small value:
// observers get a copy and never a reference into the watcher's state.

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
