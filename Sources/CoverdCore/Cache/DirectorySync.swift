import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Makes renames in a directory durable with `fsync` on the directory (and
/// on the directory they came from, where a rename is not one journal
/// transaction: `CoverStore.renamedDirectories`),
/// coalesced: renames that happen while a sync runs share the next one, so a
/// burst of thousands of covers costs a handful of directory syncs instead
/// of one each. Off the caller's thread; `flush()` waits for the last one.
///
/// With group commits, renames ride on the `FlushBatcher`'s next `syncfs`
/// instead (`init(groupCommitsOf:)`): its journal commit makes them durable,
/// and a directory `fsync` would force a commit of its own. During a sync of
/// thousands of covers, those extra commits (one every few milliseconds)
/// kept the journal busy and stalled the creates and renames waiting on it.
///
/// A rename not yet synced when the power fails is found at the next start
/// (the file is missing or does not match the index) and fetched again; the
/// file's own data is always synced before its rename.
public final class DirectorySync: Sendable {
    private let paths: [String]
    /// Set when renames ride on group commits; `paths` is then empty.
    private let batcher: FlushBatcher?
    private let queue = DispatchQueue(label: "coverd.directory-sync")
    private let requested = Atomic<Bool>(false)
    private let onError: @Sendable (SystemError) -> Void

    /// `onError` hears of a directory that cannot be opened or synced (on the sync's queue).
    public convenience init(path: String, onError: @escaping @Sendable (SystemError) -> Void = { _ in }) {
        self.init(paths: [path], onError: onError)
    }

    /// Each of `paths` is synced at every request.
    public init(paths: [String], onError: @escaping @Sendable (SystemError) -> Void = { _ in }) {
        self.paths = paths
        self.onError = onError
        batcher = nil
    }

    /// Renames made durable by `batcher`'s next `syncfs`, which must group-commit.
    public init(groupCommitsOf batcher: FlushBatcher, onError: @escaping @Sendable (SystemError) -> Void = { _ in }) {
        precondition(batcher.groupCommits, "without group commits, renames need their directory fsynced")
        paths = []
        self.onError = onError
        self.batcher = batcher
    }

    /// Schedules a sync unless one is already waiting to start.
    public func request() {
        if let batcher { return batcher.requestFlush(onError: onError) }
        guard !requested.exchange(true, ordering: .acquiringAndReleasing) else { return }
        queue.async { [self] in
            requested.store(false, ordering: .releasing)
            for path in paths {
                let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
                guard fd >= 0 else {
                    onError(SystemError("open", path: path))
                    continue
                }
                if fsync(fd) != 0 { onError(SystemError("fsync", path: path)) }
                close(fd)
            }
        }
    }

    /// Waits until every sync requested so far has run.
    public func flush() {
        if let batcher { return batcher.waitUntilIdle() }
        queue.sync {}
    }
}
