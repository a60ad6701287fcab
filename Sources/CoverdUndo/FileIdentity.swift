#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Which file a path names and which version of it: device, inode, size and
/// modification time, to notice a save between reading a record and replacing it.
struct FileIdentity: Equatable {
    var device: UInt64
    var inode: UInt64
    var size: Int64
    var modified: timespec

    init(_ info: stat) {
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        size = Int64(info.st_size)
        modified = info.st_mtim
    }

    /// The identity of the file at `path` now; nil when it cannot be looked at.
    init?(of path: String) {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        self.init(info)
    }

    static func == (left: FileIdentity, right: FileIdentity) -> Bool {
        left.device == right.device && left.inode == right.inode && left.size == right.size
            && left.modified.tv_sec == right.modified.tv_sec && left.modified.tv_nsec == right.modified.tv_nsec
    }
}
