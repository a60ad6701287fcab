import CLinux
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Unnamed temporary files (`O_TMPFILE`) in one directory: a cover's bytes
/// are written to an inode that has no name and is linked into place only
/// once durable. A crash leaves nothing behind (the kernel frees unlinked
/// inodes when the filesystem is mounted again), and publishing a new cover
/// is one directory insertion instead of a create, a rename and a removal in
/// a directory of thousands of entries.
///
/// Each file holds a descriptor until it is linked or dropped, so at most
/// `limit` are open at once: when durability lags (a slow disk) and covers
/// queue for the next sync, the rest fall back to named temporary files
/// rather than exhaust descriptors the transfers need. Where the filesystem
/// or `/proc` does not support them, `create()` always returns nil.
public final class UnnamedFiles: Sendable {
    public let directory: String
    public let limit: Int
    private let openCount = Atomic<Int>(0)
    private let usable = Atomic<Bool>(true)

    public init(directory: String, limit: Int = 256) {
        self.directory = directory
        self.limit = limit
        // Linking goes through /proc/self/fd (linkat with AT_EMPTY_PATH needs a capability).
        if access("/proc/self/fd", F_OK) != 0 { usable.store(false, ordering: .relaxed) }
    }

    /// A new unnamed file, or nil when the caller should use a named one.
    public func create() -> UnnamedFile? {
        guard usable.load(ordering: .relaxed) else { return nil }
        guard openCount.add(1, ordering: .relaxed).newValue <= limit else {
            openCount.subtract(1, ordering: .relaxed)
            return nil
        }
        let descriptor = open(directory, O_WRONLY | COVERD_O_TMPFILE | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            // No support here (EOPNOTSUPP, EISDIR on old kernels): stop asking. Anything
            // else (EMFILE, ENOSPC) is left to the named file's own open to report.
            if errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL { usable.store(false, ordering: .relaxed) }
            openCount.subtract(1, ordering: .relaxed)
            return nil
        }
        return UnnamedFile(descriptor: descriptor, owner: self)
    }

    /// Called when linking failed for a reason that will not go away (no /proc):
    /// later covers use named files.
    func stopUsing() {
        usable.store(false, ordering: .relaxed)
    }

    fileprivate func closed() {
        openCount.subtract(1, ordering: .relaxed)
    }
}

/// One open unnamed file. Dropping it closes the descriptor, which frees the
/// inode unless `link` gave it a name.
public final class UnnamedFile: Sendable {
    public let descriptor: Int32
    private let owner: UnnamedFiles

    fileprivate init(descriptor: Int32, owner: UnnamedFiles) {
        self.descriptor = descriptor
        self.owner = owner
    }

    deinit {
        close(descriptor)
        owner.closed()
    }

    /// Gives the (durable) file the name `target`. A new name is one `linkat`;
    /// an existing cover is replaced atomically: linked as `staging`, then
    /// renamed over `target`, so readers see the old file or the new one.
    func link(as target: String, staging: String) throws(SystemError) {
        let source = "/proc/self/fd/\(descriptor)"
        if linkat(AT_FDCWD, source, AT_FDCWD, target, AT_SYMLINK_FOLLOW) == 0 { return }
        guard errno == EEXIST else {
            let error = SystemError("link", path: target)
            if [ENOENT, EPERM, EACCES].contains(error.code) { owner.stopUsing() }
            throw error
        }
        guard linkat(AT_FDCWD, source, AT_FDCWD, staging, AT_SYMLINK_FOLLOW) == 0 else {
            throw SystemError("link", path: staging)
        }
        guard rename(staging, target) == 0 else {
            let error = SystemError("rename", path: target)
            unlink(staging)
            throw error
        }
    }
}
