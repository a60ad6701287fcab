#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CLinux
import CoverdBase

/// A directory opened for path operations only (`O_PATH`), closed in
/// `deinit`: the socket's directory, for `*at` calls that stay in it
/// whatever happens to its path, and for addresses too long for `sun_path`.
final class DirectoryHandle: Sendable {
    let descriptor: Int32
    let path: String

    init(path: String) throws(ControlError) {
        let fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { throw .system(SystemError("open", path: path)) }
        descriptor = fd
        self.path = path
    }

    deinit {
        close(descriptor)
    }

    /// The entry `name`'s lstat, or nil when there is none.
    func entry(_ name: String) throws(ControlError) -> stat? {
        var info = stat()
        guard fstatat(descriptor, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else {
            if errno == ENOENT { return nil }
            throw .system(SystemError("stat", path: join(path, name)))
        }
        return info
    }
}
