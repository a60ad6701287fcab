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
public final class DirectorySync: Sendable {
    private let path: String
    private let queue = DispatchQueue(label: "coverd.directory-sync")
    private let requested = Atomic<Bool>(false)
    private let onError: @Sendable (SystemError) -> Void

    /// `onError` hears of a directory that cannot be opened or synced (on the sync's queue).
    public init(path: String, onError: @escaping @Sendable (SystemError) -> Void = { _ in }) {
        self.path = path
        self.onError = onError
    }

    /// Schedules a sync unless one is already waiting to start.
    public func request() {
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
        queue.sync {}
    }
}
