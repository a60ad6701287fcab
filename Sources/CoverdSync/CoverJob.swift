import CoverdFetch
import CoverdLookup
import CoverdModel
import Foundation

/// One download, or one lookup, shared by every album with the same key.
struct CoverJob {
    enum Phase: Equatable {
        /// Its download or lookup runs, under this attempt's id.
        case inFlight(FetchID)
        case staging(FetchID)
        case waiting(until: Date, token: UInt64)
    }

    var key: JobKey
    var waiters: Set<AlbumID> = []
    /// Albums that joined while the cover was being staged: they need a fetch of their own.
    var lateWaiters: Set<AlbumID> = []
    var phase: Phase
    var attempts = 0
    var lastFailure: (message: String, permanent: Bool, httpStatus: Int?)?
    /// Set while the last failure was a full disk: the size that did not fit.
    var storageBytes: Int?
    /// What a lookup found, while its cover is being staged.
    var resolution: Resolution?
    /// When a copy of another album's cover is staged: that cover's age and
    /// validators as they were when the copy was asked for, so a revalidation
    /// landing meanwhile cannot pair its new validators with the old bytes.
    var copiedFreshness: (checkedAt: Date, validators: Validators)?
    /// The copied cover was outdated, or being revalidated, when the copy was asked for: the copy is asked again once it lands.
    var copiedOutdated = false
}
