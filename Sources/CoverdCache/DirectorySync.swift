import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CoverdBase

/// Makes renames in a directory durable with `fsync` on the directory (and
/// on the directory they came from, where a rename is not one journal
/// transaction: `CoverStore.renamedDirectories`),
/// coalesced: renames that happen while a sync runs share the next one, so a
/// burst of thousands of covers costs a handful of directory syncs instead
/// of one each. Off the caller's thread; `flush()` waits for the last one.
///
/// Given a group-committing `FlushBatcher` (its `syncfs` commits renames:
/// `MetadataCommits`), a rename made while its batches run rides on its next
/// sync instead: each directory `fsync` forces a journal commit of its own,
/// on a real disk a journal write and a cache flush (bench/HISTORY.md). A rename
/// made when no batch runs gets its directory `fsync` as before.
///
/// A rename not yet synced when the power fails is found at the next start
/// (the file is missing or does not match the index) and fetched again; the
/// file's own data is always synced before its rename.
public final class DirectorySync: Sendable {
    private let paths: [String]
    /// Whose running batches renames may join; nil: always a directory `fsync`.
    private let batcher: FlushBatcher?
    private let queue = DispatchQueue(label: "coverd.directory-sync")
    private let requested = Atomic<Bool>(false)
    private let onError: @Sendable (SystemError) -> Void
    /// `fsync`, or a stand-in that counts in tests.
    private let syncDirectory: @Sendable (Int32) -> Int32

    /// `onError` hears of a directory that cannot be opened or synced (on the sync's queue).
    public convenience init(path: String, onError: @escaping @Sendable (SystemError) -> Void = { _ in }) {
        self.init(paths: [path], onError: onError)
    }

    /// Each of `paths` is synced at every request, unless the request joins
    /// `batcher`'s running batches. Pass a batcher only if it syncs the
    /// filesystem of `paths` and that sync commits renames
    /// (a group-committing batcher's does); `onError` then also hears of a
    /// failed sync, on the batcher's queue.
    public convenience init(
        paths: [String], ridingOn batcher: FlushBatcher? = nil, onError: @escaping @Sendable (SystemError) -> Void = { _ in }
    ) {
        self.init(paths: paths, ridingOn: batcher, onError: onError, syncDirectory: { fsync($0) })
    }

    init(
        paths: [String], ridingOn batcher: FlushBatcher?, onError: @escaping @Sendable (SystemError) -> Void,
        syncDirectory: @escaping @Sendable (Int32) -> Int32
    ) {
        self.paths = paths
        self.onError = onError
        self.batcher = batcher
        self.syncDirectory = syncDirectory
    }

    /// For renames from `store`'s temporary directory into `covers/`, whose
    /// files `flushes` makes durable: with group commits, riding on its
    /// batches. Without (FAT, FUSE, network, ext4 without a journal) a rename
    /// may land as two directory updates, and both directories are synced.
    public static func forRenames(
        in store: CoverStore, flushedBy flushes: FlushBatcher, onError: @escaping @Sendable (SystemError) -> Void
    ) -> DirectorySync {
        flushes.groupCommits
            ? DirectorySync(paths: [store.directory], ridingOn: flushes, onError: onError)
            : DirectorySync(paths: store.renamedDirectories, onError: onError)
    }

    /// Whether renames may ride on a batcher's syncs.
    var ridesOnBatches: Bool { batcher != nil }

    /// Schedules a sync unless one is already waiting to start.
    public func request() {
        if let batcher, batcher.joinRunningFlush(onError: onError) { return }
        guard !requested.exchange(true, ordering: .acquiringAndReleasing) else { return }
        queue.async { [self] in
            requested.store(false, ordering: .releasing)
            for path in paths {
                let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
                guard fd >= 0 else {
                    onError(SystemError("open", path: path))
                    continue
                }
                if syncDirectory(fd) != 0 { onError(SystemError("fsync", path: path)) }
                close(fd)
            }
        }
    }

    /// Waits until every sync requested so far has run.
    public func flush() {
        // The batcher first: a rename its last batch's works lead to is refused, and lands on this queue.
        batcher?.waitUntilIdle()
        queue.sync {}
    }
}
