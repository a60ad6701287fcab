/// `CoverFiles` on the real `covers/` directory.
struct StoreCoverFiles: CoverFiles, Sendable {
    let store: CoverStore
    let directorySync: DirectorySync
    let limits: ImageLimits
    let maxBytes: Int

    /// An unchanged file (same size and mtime as the index recorded) is
    /// trusted without reading it; a file whose stamp differs is read and
    /// validated.
    func check(_ id: AlbumID, expected row: IndexRow?) -> CachedFileCheck {
        guard let stamp = store.stamp(for: id) else { return .missing }
        if let row, row.bytes == stamp.bytes, row.fileMTime == stamp.mtime { return .valid(stamp) }
        let bytes: [UInt8]
        do {
            // A converted cover may be larger than any download (pixels re-encoded): bounded by the limits instead.
            bytes = try store.read(id, limit: max(maxBytes, limits.maxPixels * 5 + (1 << 20)))
        } catch {
            return .invalid("cannot read it: \(error)")
        }
        do {
            // As for downloads (this runs on the coordinator's queue; `coverd verify` inflates everything).
            _ = try PNGValidator(limits: limits, imageData: .download).validate(bytes)
            return .valid(stamp)
        } catch {
            return .invalid(error.description)
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

    func path(for id: AlbumID) -> String {
        store.path(for: id)
    }

    func hasRoom(for bytes: Int) -> Bool {
        store.hasRoom(for: bytes)
    }
}
