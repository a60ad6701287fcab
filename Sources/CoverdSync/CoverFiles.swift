import CoverdBase
import CoverdCache
import CoverdModel

/// What a cached file on disk turned out to be.
enum CachedFileCheck: Sendable, Equatable {
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
struct CoverVerdict: Sendable, Equatable {
    var check: CachedFileCheck
    var stamp: FileStamp?

    init(_ check: CachedFileCheck, stamp: FileStamp?) {
        self.check = check
        self.stamp = stamp
    }
}

/// A cover file the planner needs looked at before it can decide on its
/// album, with what the index expects of it (an unchanged file, same size
/// and mtime, need not be read).
struct FileCheckRequest: Sendable, Equatable {
    var id: AlbumID
    var expected: IndexRow?
}

/// The cover files as the planner's steps see them (`CoverFileSteps`):
/// cheap checks, renames and deletions, on the coordinator's queue. The
/// planner itself never calls them; slow work (validating downloads,
/// writing) happens elsewhere, through `.stage`.
protocol CoverFiles {
    /// Whether `<id>.png` is a valid cover; `row` says what the index expects,
    /// so an unchanged file (same size and mtime) need not be read.
    func check(_ id: AlbumID, expected row: IndexRow?) -> CachedFileCheck
    /// `<id>.png`'s size and modification time; nil when it is not a regular file.
    func stamp(_ id: AlbumID) -> FileStamp?
    func commit(_ temporary: TemporaryCover, as id: AlbumID) throws(SystemError) -> FileStamp
    /// Whether `temporary` holds the very bytes of `<id>.png` (a revalidation's body that did not change).
    func holdsSameBytes(_ temporary: TemporaryCover, as id: AlbumID) -> Bool
    func discard(_ temporary: TemporaryCover)
    func remove(_ id: AlbumID)
    /// Moves `<id>.png` into `removed/` (deleting it where it cannot be moved); false when it was not kept.
    func keep(_ id: AlbumID) -> Bool
    /// Moves a kept cover back into `covers/`; false when it is not there.
    func restoreKept(_ id: AlbumID) -> Bool
    func purgeKept(_ id: AlbumID)
    /// The ids of the covers in `removed/`.
    func keptIDs() -> [AlbumID]
    /// The room there is now for new covers.
    func freeSpace() -> FreeSpace
}

extension CoverFiles {
    /// Looks at each file the planner asked about.
    func check(_ requests: [FileCheckRequest]) -> [AlbumID: CachedFileCheck] {
        var checks: [AlbumID: CachedFileCheck] = [:]
        for request in requests { checks[request.id] = check(request.id, expected: request.expected) }
        return checks
    }

    /// Moves each kept cover the planner asked for back into `covers/`, and looks at it there.
    func restore(_ requests: [FileCheckRequest]) -> [AlbumID: CachedFileCheck] {
        var checks: [AlbumID: CachedFileCheck] = [:]
        for request in requests {
            // Looked at even when the move fails: a crash after an earlier move may have left it in `covers/` already.
            _ = restoreKept(request.id)
            checks[request.id] = check(request.id, expected: request.expected)
        }
        return checks
    }

    /// Carries out the file effects among `effects` (removals, discarded
    /// temporaries), in order, and returns the others for the coordinator.
    func carryOut(_ effects: [SyncEffect]) -> [SyncEffect] {
        var unkept: [AlbumID] = []
        return carryOut(effects, unkept: &unkept)
    }

    /// `carryOut`, naming in `unkept` the covers that could not be kept aside (they were deleted).
    func carryOut(_ effects: [SyncEffect], unkept: inout [AlbumID]) -> [SyncEffect] {
        effects.filter { effect in
            switch effect {
            case .removeCover(let id): remove(id)
            case .keepCover(let id): if !keep(id) { unkept.append(id) }
            case .purgeKept(let id): purgeKept(id)
            case .discard(let temporary): discard(temporary)
            case .fetch, .revalidate, .lookUp, .cancelAttempt, .stage, .index, .post: return true
            }
            return false
        }
    }
}
