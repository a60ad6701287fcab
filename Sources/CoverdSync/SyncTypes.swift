import Foundation
import CoverdBase
import CoverdCache
import CoverdFetch
import CoverdImages
import CoverdModel

/// What the planner asks the coordinator to do; the coordinator performs
/// these after the planner's state is updated, in order.
///
/// The large payloads are boxed (`indirect`): a scan of 10,000 new albums
/// yields 30,000 effects at once, and unboxed each would be the size of the
/// largest, an index row.
public enum SyncEffect: Sendable {
    case fetch(FetchID, CoverURL)
    case cancelFetch(FetchID)
    /// Validate `body` and write a temporary file for each album (off the coordinator's queue).
    indirect case prepare(PrepareRequest)
    case index(IndexChange)
    case post(any BusMessage)
}

/// A cover to turn into files for `albums`: a downloaded body, or the cached
/// file of another album with the same URL (so a URL is fetched only once).
public struct PrepareRequest: Sendable {
    public enum Source: Sendable {
        case download(FetchedBody)
        case cachedCover(AlbumID)
    }

    public var fetchID: FetchID
    public var url: CoverURL
    public var source: Source
    public var albums: [AlbumID]
}

/// Why a downloaded body did not become cover files.
public enum PrepareFailure: Error, Sendable {
    /// The body is not an acceptable image: permanent.
    case image(CoverImageError)
    /// The cache could not be written (a full disk): retried. `bytes` is the cover's size.
    case storage(SystemError, bytes: Int)
    /// The other album's cached file could not be used; the URL is fetched instead.
    case sourceUnavailable(String)

    var message: String {
        switch self {
        case .image(let error): return error.description
        case .storage(let error, _): return "cannot write the cover: \(error)"
        case .sourceUnavailable(let reason): return "cannot copy the cached cover: \(reason)"
        }
    }
}

/// Temporary files ready to be renamed into place, one per album.
public struct PreparedFiles: Sendable {
    public var temporaries: [AlbumID: TemporaryCover]
    public var bytes: Int
    /// Nil when the cover was copied from another album's cached file.
    public var httpStatus: Int?
    public var duration: Duration
}

/// What a cached file on disk turned out to be.
public enum CachedFileCheck: Sendable, Equatable {
    case valid(FileStamp)
    case missing
    /// Not a valid PNG: the file goes.
    case invalid(String)
    /// There, but not usable now: it cannot be read, or it is beyond the
    /// configured image limits. It is kept (a setting changed back, or a
    /// fixed permission, makes it good again) until a new cover replaces it.
    case unusable(String)
}

/// A cover read and validated off the coordinator's queue, with the stamp
/// its file had just before the read (nil: no regular file): the verdict
/// stands while the file still has that stamp.
public struct CoverVerdict: Sendable, Equatable {
    public var check: CachedFileCheck
    public var stamp: FileStamp?

    public init(_ check: CachedFileCheck, stamp: FileStamp?) {
        self.check = check
        self.stamp = stamp
    }
}

/// The file operations the planner needs synchronously, on the coordinator's
/// queue: cheap checks, renames and deletions. Slow work (validation of
/// downloads, writing) happens elsewhere, through `.prepare`.
public protocol CoverFiles {
    /// Whether `<id>.png` is a valid cover; `row` says what the index expects,
    /// so an unchanged file (same size and mtime) need not be read.
    func check(_ id: AlbumID, expected row: IndexRow?) -> CachedFileCheck
    /// `<id>.png`'s size and modification time; nil when it is not a regular file.
    func stamp(_ id: AlbumID) -> FileStamp?
    func commit(_ temporary: TemporaryCover, as id: AlbumID) throws(SystemError) -> FileStamp
    func discard(_ temporary: TemporaryCover)
    func remove(_ id: AlbumID)
    func path(for id: AlbumID) -> String
    /// Whether a cover of `bytes` can be written now (a full disk has been freed).
    func hasRoom(for bytes: Int) -> Bool
}

/// One download shared by every album with the same URL.
struct CoverJob {
    enum Phase: Equatable {
        case fetching(FetchID)
        case storing(FetchID)
        case waiting(until: Date, token: UInt64)
    }

    var url: CoverURL
    var waiters: Set<AlbumID> = []
    /// Albums that joined while the body was being stored: they need a fetch of their own.
    var lateWaiters: Set<AlbumID> = []
    var phase: Phase
    var attempts = 0
    var lastFailure: (message: String, permanent: Bool, httpStatus: Int?)?
    /// Set while the last failure was a full disk: the size that did not fit.
    var storageBytes: Int?
}
