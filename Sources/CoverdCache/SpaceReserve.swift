import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CoverdBase

/// A preallocated file that keeps some space for the index on a filesystem
/// that something else fills up: when an index write fails for lack of
/// space, the reserve is released so that the next write (which records
/// *why* covers are not being stored) fits; it is made again once space is back.
public final class SpaceReserve: Sendable {
    public let directory: String
    public let path: String
    public let bytes: Int
    private let present = Atomic<Bool>(false)

    /// Takes over a reserve an earlier run left (it is kept across restarts),
    /// so that a start on a full disk can release it too; only one whose
    /// blocks are all allocated (a sparse copy, from a backup say, holds no
    /// space: `ensure` allocates it instead).
    public init(directory: String, bytes: Int = 1024 * 1024) {
        self.directory = directory
        path = join(directory, ".coverd-reserve")
        self.bytes = bytes
        var info = stat()
        if lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG, Self.holds(bytes, info) {
            present.store(true, ordering: .releasing)
        }
    }

    /// Whether a file of `info` holds `bytes` of room: as long, and with its blocks allocated.
    private static func holds(_ bytes: Int, _ info: stat) -> Bool {
        Int(info.st_size) >= bytes && Int(info.st_blocks) &* 512 >= bytes
    }

    /// Creates the reserve if it is missing and there is plenty of room for it.
    public func ensure() {
        guard !present.load(ordering: .acquiring) else { return }
        var space = statvfs()
        guard statvfs(directory, &space) == 0, Int(space.f_bavail) &* Int(space.f_frsize) >= bytes * 4 else { return }
        let fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return }
        // Where the filesystem cannot preallocate (glibc then writes zeros, which a
        // compressing filesystem stores as nothing), the file would hold no room.
        var info = stat()
        let allocated = posix_fallocate(fd, 0, off_t(bytes)) == 0 && fstat(fd, &info) == 0 && Self.holds(bytes, info)
        close(fd)
        if allocated { present.store(true, ordering: .releasing) } else { unlink(path) }
    }

    /// Frees the reserved space; true if there was any to free.
    public func release() -> Bool {
        guard present.exchange(false, ordering: .acquiringAndReleasing) else { return false }
        return unlink(path) == 0
    }
}
