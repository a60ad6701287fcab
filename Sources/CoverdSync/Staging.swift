import CoverdBase
import CoverdCache
import CoverdFetch
import CoverdImages
import CoverdModel

// Staging a cover: its bytes validated or converted and written as one
// temporary file per album, durable, ready to be renamed into place
// (committed) on the coordinator's queue.

/// A cover to stage for `albums`: a downloaded body, or the cached file of
/// another album with the same URL (so a URL is fetched only once).
struct StageRequest: Sendable {
    enum Source: Sendable {
        case download(FetchedBody)
        case cachedCover(AlbumID)
    }

    var fetchID: FetchID
    /// The job the cover is for: a URL's, or a lookup's.
    var job: JobKey
    /// Where the cover comes from (a lookup's found URL), recorded in a converted PNG.
    var url: CoverURL
    var source: Source
    var albums: [AlbumID]
}

/// Why a cover was not staged.
enum StagingFailure: Error, Sendable {
    /// The body is not an acceptable image: permanent.
    case image(CoverImageError)
    /// The cache could not be written (a full disk): retried. `bytes` is the cover's size.
    case storage(SystemError, bytes: Int)
    /// The other album's cached file could not be used; the URL is fetched instead.
    case sourceUnavailable(String)
    /// The conversion was given up because coverd is stopping: no failure, the album stays pending.
    case stopped

    var message: String {
        switch self {
        case .image(let error): return error.description
        case .storage(let error, _): return "cannot write the cover: \(error)"
        case .sourceUnavailable(let reason): return "cannot copy the cached cover: \(reason)"
        case .stopped: return CoverImageError.cancelled.description
        }
    }
}

/// Temporary files ready to be renamed into place, one per album.
struct StagedCovers: Sendable {
    var temporaries: [AlbumID: TemporaryCover]
    var bytes: Int
    /// Nil when the cover was copied from another album's cached file.
    var httpStatus: Int?
    var duration: Duration
    /// The download's validators (none for a copy).
    var validators = Validators(etag: nil, lastModified: nil)
    /// The album whose cached file was copied, when it was.
    var copiedFrom: AlbumID?
}
