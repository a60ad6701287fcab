import CLinux
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CoverdBase
import CoverdModel

/// Size and modification time of a cached file, to tell whether it changed.
public struct FileStamp: Sendable, Equatable {
    public var bytes: Int
    public var mtime: Int64  // nanoseconds since the epoch

    public init(bytes: Int, mtime: Int64) {
        self.bytes = bytes
        self.mtime = mtime
    }
}

/// A fully written temporary file waiting to be made durable and renamed into place.
public struct TemporaryCover: Sendable {
    public var path: String
    public var bytes: Int
    /// Its size and mtime as written; a rename keeps both.
    public var stamp: FileStamp
}

/// The `covers/` directory: `<id>.png` files that are always complete PNGs.
///
/// A cover is written to a hidden temporary file in `incoming/`, beside
/// `covers/` in the cache directory, flushed (its
/// own fsync, or a batched `syncfs`: `FlushBatcher`), then renamed over
/// `<id>.png`, and the rename made durable (`DirectorySync`); a crash at any point leaves either the
/// old file, the new file, or a temporary file that `removeLeftovers()`
/// deletes at the next start. `covers/` itself never holds a partial file.
///
/// Why a directory of their own: every lookup in a directory scans a block of
/// its entries, and each temporary file is looked up five times (created,
/// opened again, renamed from, renamed to, and its entry removed); beside
/// thousands of covers those scans showed in a full sync's profile
/// (bench/HISTORY.md). In `incoming/`, which holds only the covers being
/// written, they are short. Where a rename from `incoming/` into
/// `covers/` cannot work (`covers/` a symlink to another disk, or a bind
/// mount: EXDEV), `setUp()` keeps the temporaries in `covers/` itself, as
/// versions before this one did.
public struct CoverStore: Sendable {
    public let directory: String
    /// `incoming/`, swept for leftovers whether or not it is `temporaryDirectory`.
    public let incomingDirectory: String
    /// `removed/`: the covers of albums that left the records, kept a while
    /// in case they come back (contract §9), out of `covers/`.
    public private(set) var keptDirectory: String
    /// Where covers are written before they are renamed into `directory`:
    /// `incomingDirectory`, or `directory` itself (see `setUp()`).
    public private(set) var temporaryDirectory: String
    /// Free space a cover write leaves untouched, so that on a nearly full
    /// disk the index can still record why covers are not being stored.
    public let reserveBytes: Int
    /// Random, in the name of every temporary file this store writes: the
    /// leftovers of earlier runs can be swept while this one writes its own.
    let runToken = String(UInt64.random(in: 0...UInt64.max), radix: 36)

    public init(cacheDirectory: String, reserveBytes: Int = 2 * 1024 * 1024) {
        directory = join(cacheDirectory, "covers")
        incomingDirectory = join(cacheDirectory, "incoming")
        // Inside covers/ when setUp() found removed/ on another filesystem (see keptOnCoversFilesystem).
        let hidden = join(directory, CoverStore.hiddenKeptName)
        var info = stat()
        keptDirectory = stat(hidden, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR ? hidden : join(cacheDirectory, "removed")
        temporaryDirectory = incomingDirectory
        self.reserveBytes = reserveBytes
    }

    /// Where covers are, without the means to change them.
    public var paths: CoverPaths { CoverPaths(directory: directory) }

    public func path(for id: AlbumID) -> String {
        paths.path(for: id)
    }

    public func createDirectory() throws(SystemError) {
        try makeDirectories(directory)
        try makeDirectories(incomingDirectory)
    }

    /// Creates both directories and returns the store the daemon writes
    /// with: temporaries in `incoming/` when a file renamed from there lands
    /// in `covers/`, else in `covers/` (the rename would fail with EXDEV).
    /// `renameFailure` says why, when the temporaries stay in `covers/`.
    public func setUp() throws(SystemError) -> (store: CoverStore, renameFailure: SystemError?) {
        try createDirectory()
        var store = self
        store.keptDirectory = try keptOnCoversFilesystem()
        guard let failure = CoverStore.renameFailure(from: incomingDirectory, to: directory) else { return (store, nil) }
        store.temporaryDirectory = directory
        return (store, failure)
    }

    /// `covers/.removed`, where kept covers go when `covers/` is on another filesystem than the cache.
    static let hiddenKeptName = ".removed"

    /// Where kept covers go: `removed/`, when a cover renamed there from
    /// `covers/` lands (the same filesystem), else `covers/.removed`, so a
    /// kept cover is always a rename away, never a copy that could fail
    /// half-way. A kept cover costs no download when its album comes back.
    func keptOnCoversFilesystem() throws(SystemError) -> String {
        let removed = join(splitPath(directory).directory, "removed")
        let hidden = join(directory, CoverStore.hiddenKeptName)
        if keptDirectory == hidden { return hidden }
        try makeDirectories(removed)
        guard CoverStore.renameFailure(from: directory, to: removed) != nil else { return removed }
        try makeDirectories(hidden)
        return hidden
    }

    /// Why a file renamed from `source` would not land in `target` (nil: it
    /// would), tried with an empty file named as a temporary (so a crash
    /// leaves only a leftover to sweep).
    static func renameFailure(from source: String, to target: String) -> SystemError? {
        let name = ".rename-check.\(String(UInt64.random(in: 0...UInt64.max), radix: 36)).tmp"
        let from = join(source, name)
        let to = join(target, name)
        let fd = open(from, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return SystemError("create", path: from) }
        close(fd)
        defer {
            unlink(from)
            unlink(to)
        }
        return rename(from, to) == 0 ? nil : SystemError("rename into \(target)", path: from)
    }

    /// Temporary files are `.<id>.<runToken>-<random>.tmp`: hidden, and never `*.png`.
    static func isTemporary(_ name: String) -> Bool { name.hasPrefix(".") && name.hasSuffix(".tmp") }

    /// The directories a `commit`'s rename changes: `covers/`, and the one
    /// the temporary came from when that is another.
    public var renamedDirectories: [String] {
        temporaryDirectory == directory ? [directory] : [directory, temporaryDirectory]
    }

    /// Whether `name` is a temporary file of this store's run (an id may hold dots; the run and the random part do not).
    func isOwnTemporary(_ name: String) -> Bool {
        guard CoverStore.isTemporary(name), let dot = name.dropLast(4).lastIndex(of: ".") else { return false }
        return name[name.index(after: dot)...].hasPrefix(runToken + "-")
    }

    /// Deletes temporary files a crash left behind, in `incoming/` and (as
    /// versions before it wrote them) in `covers/`; returns their paths.
    /// With `sparingThisRun`, this store's own are left alone, so the sweep
    /// may run while covers are being written.
    public func removeLeftovers(sparingThisRun: Bool = false) -> [String] {
        [incomingDirectory, directory].flatMap { folder in
            let hidden = listDirectory(folder, keeping: { $0.first == UInt8(ascii: ".") }) ?? []
            return hidden.compactMap(\.name)
                .filter { CoverStore.isTemporary($0) && !(sparingThisRun && isOwnTemporary($0)) }
                .map { join(folder, $0) }
                .filter { unlink($0) == 0 }
        }
    }

    /// Names of the entries in `covers/`.
    public func listNames() -> [String] {
        // Names coverd did not write (not UTF-8) are neither covers nor its temporary files.
        (listDirectory(directory) ?? []).compactMap(\.name)
    }

    /// The room there is now for covers, with this store's reserve.
    public func freeSpace() -> FreeSpace {
        guard reserveBytes > 0 else { return FreeSpace(available: nil, reserve: 0) }
        var space = statvfs()
        guard statvfs(directory, &space) == 0 else { return FreeSpace(available: nil, reserve: reserveBytes) }  // Unknown: let the write find out.
        return FreeSpace(available: Int(space.f_bavail) &* Int(space.f_frsize), reserve: reserveBytes)
    }

    /// Whether a cover of `bytes` fits while leaving the reserve free.
    public func hasRoom(for bytes: Int) -> Bool {
        freeSpace().fits(bytes)
    }

    /// Writes `bytes` to a new temporary file. With `flush`, it is fsynced
    /// before this returns, and its pages dropped from the page cache;
    /// without, the caller makes it durable (see `FlushBatcher`), then calls
    /// `dropCachedPages(of:)`, then renames it into place (`commit`).
    public func writeTemporary(_ bytes: [UInt8], for id: AlbumID, flush: Bool = true) throws(SystemError) -> TemporaryCover {
        guard hasRoom(for: bytes.count) else {
            throw SystemError("keep \(reserveBytes / 1024) KiB free in", path: directory, code: ENOSPC)
        }
        let path = join(temporaryDirectory, ".\(id.rawValue).\(runToken)-\(String(UInt64.random(in: 0...UInt64.max), radix: 36)).tmp")
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw SystemError("create", path: path) }
        var failure = bytes.withUnsafeBytes { writeAll($0, to: fd) }.map { SystemError("write", path: path, code: $0) }
        if failure == nil && flush {
            if fsync(fd) != 0 {
                failure = SystemError("fsync", path: path)
            } else {
                _ = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED)  // Durable, so clean: see `dropCachedPages(of:)`.
            }
        }
        var info = stat()
        if failure == nil && fstat(fd, &info) != 0 { failure = SystemError("fstat", path: path) }
        if close(fd) != 0 && failure == nil { failure = SystemError("close", path: path) }
        if let failure {
            unlink(path)
            throw failure
        }
        let mtime = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
        return TemporaryCover(path: path, bytes: bytes.count, stamp: FileStamp(bytes: Int(info.st_size), mtime: mtime))
    }

    /// Renames a (flushed) temporary file to `<id>.png`; the caller makes the
    /// rename durable (`DirectorySync.forRenames`).
    public func commit(_ temporary: TemporaryCover, as id: AlbumID) throws(SystemError) -> FileStamp {
        let target = path(for: id)
        guard rename(temporary.path, target) == 0 else {
            let error = SystemError("rename", path: target)
            unlink(temporary.path)
            throw error
        }
        return temporary.stamp
    }

    /// Once a temporary file is durable, its pages are clean and can leave
    /// the page cache: covers are written once and rarely read soon after,
    /// and kept cached, a large sync pushed other programs' data out of
    /// memory (README, Performance). The
    /// temporary name is coverd's own until the rename, so it is opened again
    /// by name rather than kept open from the write (which would hold one
    /// descriptor per cover waiting for its flush). Call after the file is
    /// durable (dirty pages are not dropped) and before `commit` (after it the
    /// temporary name is gone, and this does nothing). Advice only: a failure
    /// leaves the pages cached.
    public func dropCachedPages(of temporary: TemporaryCover) {
        // O_NONBLOCK: should something else stand under the name (a FIFO), opening it must not wait.
        let fd = open(temporary.path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED)
        close(fd)
    }

    public func discard(_ temporary: TemporaryCover) {
        unlink(temporary.path)
    }

    /// Removes `<id>.png`; a missing file is not an error.
    @discardableResult
    public func remove(_ id: AlbumID) -> Bool {
        unlink(path(for: id)) == 0
    }

    /// Where `id`'s cover is kept while its album is out of the records.
    public func keptPath(for id: AlbumID) -> String {
        join(keptDirectory, id.rawValue + ".png")
    }

    /// Moves `<id>.png` out of `covers/` into the kept directory (`setUp()`
    /// chose one the rename reaches). Where it still cannot be moved, it is
    /// deleted: `covers/` holds only the covers of albums in the records.
    /// False when it was not kept, which the planner is told.
    @discardableResult
    public func keep(_ id: AlbumID) -> Bool {
        // setUp() made it; a store that was not set up (tests) makes it when first needed.
        if mkdir(keptDirectory, 0o755) != 0 && errno != EEXIST { remove(id); return false }
        if rename(path(for: id), keptPath(for: id)) == 0 { return true }
        if errno != ENOENT { remove(id) }
        return false
    }

    /// Moves a kept cover back into `covers/`; false when it is not there.
    public func restoreKept(_ id: AlbumID) -> Bool {
        rename(keptPath(for: id), path(for: id)) == 0
    }

    /// Deletes a kept cover; a missing file is not an error.
    public func purgeKept(_ id: AlbumID) {
        unlink(keptPath(for: id))
    }

    /// The ids of the covers in `removed/`, for the sweep of those no row keeps.
    public func keptIDs() -> [AlbumID] {
        (listDirectory(keptDirectory) ?? []).compactMap { entry in
            guard let name = entry.name, name.hasSuffix(".png") else { return nil }
            return try? AlbumID(validating: String(name.dropLast(4)))  // Another name is none of coverd's: left alone.
        }
    }

    public func read(_ id: AlbumID, limit: Int) throws(FileReadError) -> [UInt8] {
        try readRegularFile(path(for: id), limit: limit)
    }

}
