import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Makes renames in a directory durable with `fsync` on the directory,
/// coalesced: renames that happen while a sync runs share the next one, so a
/// burst of thousands of covers costs a handful of directory syncs instead
/// of one each. Off the caller's thread; `flush()` waits for the last one.
///
/// A rename not yet synced when the power fails is found at the next start
/// (the file is missing or does not match the index) and fetched again; the
/// file's own data is always synced before its rename.
///
/// Where a `FlushBatcher` group-commits (ext4, XFS, …), renames ride on its
/// next `syncfs`, which commits the directory's entries with everything else:
/// a separate directory `fsync` is one more journal commit competing with
/// the batcher's (3,453 of them, 6.7 s of blocked time, for 10,000 covers
/// under strace).
public final class DirectorySync: Sendable {
    private let path: String
    private let queue = DispatchQueue(label: "coverd.directory-sync")
    private let requested = Atomic<Bool>(false)
    private let onError: @Sendable (SystemError) -> Void
    private let batcher: FlushBatcher?

    /// `onError` hears of a directory that cannot be opened or synced (on the
    /// sync's queue). With a group-committing `batcher`, its syncs do the work.
    public init(path: String, batcher: FlushBatcher? = nil, onError: @escaping @Sendable (SystemError) -> Void = { _ in }) {
        self.path = path
        self.onError = onError
        self.batcher = batcher?.groupCommits == true ? batcher : nil
    }

    /// Schedules a sync unless one is already waiting to start.
    public func request() {
        if let batcher {
            // Renamed already: the batcher's next sync, not one already running, makes it durable.
            batcher.afterFlush(ticket: batcher.beginWrite()) { [onError] error in error.map(onError) }
            return
        }
        guard !requested.exchange(true, ordering: .acquiringAndReleasing) else { return }
        queue.async { [self] in
            requested.store(false, ordering: .releasing)
            let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard fd >= 0 else { return onError(SystemError("open", path: path)) }
            if fsync(fd) != 0 { onError(SystemError("fsync", path: path)) }
            close(fd)
        }
    }

    /// Waits until every sync requested so far has run.
    public func flush() {
        batcher?.waitUntilIdle()
        queue.sync {}
    }
}
