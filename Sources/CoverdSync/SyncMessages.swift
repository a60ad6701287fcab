import CoverdBase
import CoverdModel
import Foundation

// The messages the coordinator posts on the bus. Each is a small value:
// observers get a copy and never a reference into the planner's state.

/// Albums that the index did not know before, from one batch of records.
public struct AlbumsAdded: BusMessage {
    public var albums: [Album]
}

/// An album whose record went away; it left the index and the cache.
public struct AlbumRemoved: BusMessage {
    public var id: AlbumID
    public var record: String
    /// The record's `cover_url`; nil for an album whose cover was looked up.
    public var coverURL: String?
    /// Until when its cover is kept in `removed/`, in case it comes back; nil when it had none.
    public var keptUntil: Date?
}

/// An album came back to the records while its cover was kept: the cover is
/// in `covers/` again, with no download.
public struct CoverRestored: BusMessage {
    public var album: Album
    public var path: String
}

/// The kept covers of albums removed longer than `cache.keep_removed` ago were deleted.
public struct KeptCoversPurged: BusMessage {
    public var count: Int
    public var keptFor: Duration
}

/// A cover stored in the cache.
public struct CoverCached: BusMessage {
    public var album: Album
    public var path: String
    /// Where it was downloaded from: the record's URL, or the one a lookup found.
    public var url: CoverURL
    /// How that URL was found, with the MusicBrainz ids a lookup went through.
    public var source: CoverSource
    public var releaseID: MusicBrainzID?
    public var releaseGroupID: MusicBrainzID?
    public var bytes: Int
    public var httpStatus: Int?
    public var duration: Duration
    /// True when it replaced an outdated cover whose server sent a new one (contract §8).
    public var revalidated = false
}

/// An outdated cover confirmed by its server (`304 Not Modified`): the file was not touched.
public struct CoverRevalidated: BusMessage {
    public var album: Album
    public var path: String
    /// The URL asked: the record's, or the one a lookup found.
    public var url: CoverURL
    public var duration: Duration
}

/// An outdated cover could not be revalidated: it stays cached as it is,
/// outdated, and is tried again at `retryAt`.
public struct RevalidationFailed: BusMessage {
    public var album: Album
    public var url: CoverURL
    public var reason: String
    public var httpStatus: Int?
    public var retryAt: Date
}

/// A cover that could not be found, fetched or stored.
public struct CoverFailed: BusMessage {
    public var album: Album
    /// The URL that failed; nil when a lookup failed before there was one.
    public var url: CoverURL?
    /// The error; a lookup that found nothing says "no cover found" and what it tried.
    public var reason: String
    /// A lookup asked everywhere and found no cover (no request failed).
    public var nothingFound: Bool
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
    /// One cover found missing or corrupt, and what was wrong with it.
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

/// The summary changed. Posted after every batch of state changes.
public struct SyncProgress: BusMessage {
    public var summary: SyncSummary
    public init(summary: SyncSummary) { self.summary = summary }
}
