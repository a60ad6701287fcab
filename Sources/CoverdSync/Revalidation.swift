import CoverdFetch
import CoverdModel

/// One revalidation in progress: the cached albums of one job whose cover
/// is asked again (contract §8). Kept apart from the job's own `CoverJob`, so
/// that whatever it meets (a failure, a hostile answer) leaves the albums
/// cached with the cover they have.
struct Revalidation {
    var fetchID: FetchID
    var url: CoverURL
    var albums: Set<AlbumID>
    /// The validators the request sends: a 304 confirms only the covers that have these.
    var asked = Validators(etag: nil, lastModified: nil)
    /// A new body arrived and is being staged, with the validators it came with.
    var staging = false
    var validators = Validators(etag: nil, lastModified: nil)
}
