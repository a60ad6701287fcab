import CoverdBase
import CoverdCache
import CoverdFetch
import CoverdLookup
import CoverdModel

/// What the planner asks the coordinator to do; the coordinator performs
/// these after the planner's state is updated, in order.
///
/// The large payloads are boxed (`indirect`): a scan of 10,000 new albums
/// yields 30,000 effects at once, and unboxed each would be the size of the
/// largest, an index row.
enum SyncEffect: Sendable {
    case fetch(FetchID, CoverURL)
    /// Ask again for the cached cover of a job's albums, with its validators (contract §8).
    indirect case revalidate(FetchID, JobKey, CoverURL, Validators)
    /// Find and download the cover of albums without a URL (`CoverLookup`).
    indirect case lookUp(FetchID, LookupRequest)
    /// Stop a fetch or a lookup.
    case cancelAttempt(FetchID)
    /// Validate or convert a cover and write a temporary file for each album (off the coordinator's queue).
    indirect case stage(StageRequest)
    /// Delete `<id>.png`: its album left, its URL changed, or the file is corrupt.
    case removeCover(AlbumID)
    /// Move `<id>.png` out of `covers/` into `removed/`: its album left the records.
    case keepCover(AlbumID)
    /// Delete a kept cover: its time is up, or its album came back with another URL.
    case purgeKept(AlbumID)
    /// Delete a temporary file that no album wants any more.
    indirect case discard(TemporaryCover)
    case index(IndexChange)
    case post(any BusMessage)
}
