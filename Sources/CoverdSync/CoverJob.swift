import CoverdFetch
import CoverdLookup
import CoverdModel
import Foundation

/// One download, or one lookup, shared by every album with the same key.
///
/// A first sync holds a job for every album at once, so what few jobs ever
/// have (a failure, late waiters, a lookup's find, a copy's freshness) lives
/// out of line, in `Rare`, copied on write.
struct CoverJob {
    enum Phase: Equatable {
        /// Its download or lookup runs, under this attempt's id.
        case inFlight(FetchID)
        case staging(FetchID)
        case waiting(until: Date, token: UInt64)
    }

    /// The fields most jobs never set, with their defaults.
    struct Rare {
        var lateWaiters: Set<AlbumID> = []
        var lastFailure: (message: String, permanent: Bool, httpStatus: Int?)?
        var storageBytes: Int?
        var resolution: Resolution?
        var copiedFreshness: (checkedAt: Date, validators: Validators)?
        var copiedOutdated = false
    }

    /// `Rare` behind a reference, so a job without any costs one pointer.
    private final class RareBox {
        var value: Rare
        init(_ value: Rare) { self.value = value }
    }

    var key: JobKey
    var waiters: Set<AlbumID> = []
    var phase: Phase
    var attempts = 0
    private var rareBox: RareBox?

    init(
        key: JobKey, waiters: Set<AlbumID> = [], phase: Phase, attempts: Int = 0, storageBytes: Int? = nil,
        resolution: Resolution? = nil
    ) {
        self.key = key
        self.waiters = waiters
        self.phase = phase
        self.attempts = attempts
        if storageBytes != nil || resolution != nil {
            rareBox = RareBox(Rare(storageBytes: storageBytes, resolution: resolution))
        }
    }

    /// Changes the rare fields, copying them first when another job shares them;
    /// setting a default on a job without any allocates nothing.
    private mutating func change(toDefault: Bool, _ body: (inout Rare) -> Void) {
        if rareBox == nil && toDefault { return }
        let box: RareBox
        if isKnownUniquelyReferenced(&rareBox), let owned = rareBox {
            box = owned
        } else {
            box = RareBox(rareBox?.value ?? Rare())
            rareBox = box
        }
        body(&box.value)
    }

    private var rare: Rare { rareBox?.value ?? Rare() }

    /// Albums that joined while the cover was being staged: they need a fetch of their own.
    var lateWaiters: Set<AlbumID> {
        get { rare.lateWaiters }
        set { change(toDefault: newValue.isEmpty) { $0.lateWaiters = newValue } }
    }
    var lastFailure: (message: String, permanent: Bool, httpStatus: Int?)? {
        get { rare.lastFailure }
        set { change(toDefault: newValue == nil) { $0.lastFailure = newValue } }
    }
    /// Set while the last failure was a full disk: the size that did not fit.
    var storageBytes: Int? {
        get { rare.storageBytes }
        set { change(toDefault: newValue == nil) { $0.storageBytes = newValue } }
    }
    /// What a lookup found, while its cover is being staged.
    var resolution: Resolution? {
        get { rare.resolution }
        set { change(toDefault: newValue == nil) { $0.resolution = newValue } }
    }
    /// When a copy of another album's cover is staged: that cover's age and
    /// validators as they were when the copy was asked for, so a revalidation
    /// landing meanwhile cannot pair its new validators with the old bytes.
    var copiedFreshness: (checkedAt: Date, validators: Validators)? {
        get { rare.copiedFreshness }
        set { change(toDefault: newValue == nil) { $0.copiedFreshness = newValue } }
    }
    /// The copied cover was outdated, or being revalidated, when the copy was asked for: the copy is asked again once it lands.
    var copiedOutdated: Bool {
        get { rare.copiedOutdated }
        set { change(toDefault: !newValue) { $0.copiedOutdated = newValue } }
    }
}
