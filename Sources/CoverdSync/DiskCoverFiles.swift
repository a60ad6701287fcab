import CoverdBase
import CoverdCache
import CoverdImages
import CoverdModel

/// `CoverFiles` on the real `covers/` directory.
struct DiskCoverFiles: CoverFiles, Sendable {
    let store: CoverStore
    let directorySync: DirectorySync
    let limits: ImageLimits
    let maxBytes: Int
    /// The daemon's, shared with its downloads' checks.
    let inflateMemory: InflateMemory

    /// An unchanged file (same size and mtime as the index recorded) is
    /// trusted without reading it; a file whose stamp differs is read and
    /// validated.
    func check(_ id: AlbumID, expected row: IndexRow?) -> CachedFileCheck {
        examine(id, expected: row).check
    }

    /// Reads and validates `<id>.png` whatever its stamp (for `CachedCoverCheck`, off the coordinator's queue).
    func inspect(_ id: AlbumID) -> CoverVerdict {
        examine(id, expected: nil)
    }

    func stamp(_ id: AlbumID) -> FileStamp? {
        store.stamp(for: id)
    }

    /// The check, with the stamp taken before the read (so a file replaced
    /// during the read shows a newer stamp than its verdict's).
    private func examine(_ id: AlbumID, expected row: IndexRow?) -> CoverVerdict {
        guard let stamp = store.stamp(for: id) else { return CoverVerdict(.missing, stamp: nil) }
        if let row, row.bytes == stamp.bytes, row.fileMTime == stamp.mtime { return CoverVerdict(.valid(stamp), stamp: stamp) }
        let bytes: [UInt8]
        do {
            // A converted cover may be larger than any download (pixels re-encoded): bounded by the limits instead.
            bytes = try store.read(id, limit: max(maxBytes, limits.maxPixels * 5 + (1 << 20)))
        } catch {
            return CoverVerdict(.unusable("cannot read it: \(error)"), stamp: stamp)
        }
        do throws(PNGValidationError) {
            _ = try PNGValidator(limits: limits, inflateMemory: inflateMemory).validate(bytes)
            return CoverVerdict(.valid(stamp), stamp: stamp)
        } catch {
            if case .tooLarge = error { return CoverVerdict(.unusable("beyond the image limits: \(error)"), stamp: stamp) }
            return CoverVerdict(.invalid(error.description), stamp: stamp)
        }
    }

    /// Sizes first: a changed cover is nearly always another size, and costs no read.
    func holdsSameBytes(_ temporary: TemporaryCover, as id: AlbumID) -> Bool {
        guard let current = store.stamp(for: id), current.bytes == temporary.bytes else { return false }
        do {
            return try readRegularFile(temporary.path, limit: temporary.bytes + 1) == store.read(id, limit: current.bytes + 1)
        } catch {
            return false  // Unreadable either way: the rename replaces the file, as it would have.
        }
    }

    func commit(_ temporary: TemporaryCover, as id: AlbumID) throws(SystemError) -> FileStamp {
        let stamp = try store.commit(temporary, as: id)
        directorySync.request()
        return stamp
    }

    func discard(_ temporary: TemporaryCover) {
        store.discard(temporary)
    }

    func remove(_ id: AlbumID) {
        store.remove(id)
    }

    func keep(_ id: AlbumID) -> Bool {
        store.keep(id)
    }

    func keptIDs() -> [AlbumID] {
        store.keptIDs()
    }

    func restoreKept(_ id: AlbumID) -> Bool {
        store.restoreKept(id)
    }

    func purgeKept(_ id: AlbumID) {
        store.purgeKept(id)
    }

    func path(for id: AlbumID) -> String {
        store.path(for: id)
    }

    func freeSpace() -> FreeSpace {
        store.freeSpace()
    }
}
