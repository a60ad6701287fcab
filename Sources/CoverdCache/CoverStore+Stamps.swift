#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CoverdBase
import CoverdModel

/// Looking covers up on the disk without reading them: a cover's stamp (its
/// size and modification time), one at a time or many at once.
extension CoverStore {
    public func stamp(for id: AlbumID) -> FileStamp? {
        stamp(atPath: path(for: id))
    }

    fileprivate func stamp(atPath path: String) -> FileStamp? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        return Self.stamp(of: info)
    }

    /// The stamps of many covers at once, one for each name in order, looked up
    /// by name in the directory, opened once per call, rather than each by
    /// its full path: the kernel then walks one name per cover instead of
    /// every directory above it too. (Most of the lookups after a cache drop
    /// go to searching the directory and reading inodes, which this does not
    /// change.) Without the directory every stamp is nil; if it cannot be
    /// opened otherwise, each is looked up by its path.
    package func stamps(of names: CoverFileNames) -> [FileStamp?] {
        let directoryFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryFD < 0 && (errno == ENOENT || errno == ENOTDIR) { return names.mapNames { _ in nil } }
        defer { if directoryFD >= 0 { close(directoryFD) } }
        return stamps(of: names, in: directoryFD >= 0 ? directoryFD : nil)
    }

    /// `stamps(of:)` in the open directory `directoryFD`, or by path when nil.
    func stamps(of names: CoverFileNames, in directoryFD: Int32?) -> [FileStamp?] {
        names.mapNames { name in
            guard let directoryFD else { return stamp(atPath: join(directory, String(cString: name))) }
            var info = stat()
            return fstatat(directoryFD, name, &info, AT_SYMLINK_NOFOLLOW) == 0 ? Self.stamp(of: info) : nil
        }
    }

    fileprivate static func stamp(of info: stat) -> FileStamp? {
        guard info.st_mode & S_IFMT == S_IFREG else { return nil }
        return FileStamp(bytes: Int(info.st_size), mtime: Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec))
    }
}

/// The file names of many covers (`<id>.png`) in one buffer, each followed
/// by a NUL, for `CoverStore.stamps(of:)`.
///
/// Why one buffer: each name is handed to `fstatat` as a C string, and a
/// batch of a thousand covers then costs two allocations, not one C string
/// per cover (a heap string for every id over 15 bytes).
package struct CoverFileNames: Sendable {
    private var bytes: [UInt8] = []
    /// Where each name starts in `bytes`: a NUL inside an id cannot shift the names after it.
    private var starts: [UInt32] = []

    package init(_ ids: [AlbumID]) {
        starts.reserveCapacity(ids.count)
        // ".png" and a NUL make 5 bytes more, and 3 to spare let ids a little longer than the first fit too.
        bytes.reserveCapacity(ids.count * ((ids.first?.rawValue.utf8.count ?? 0) + 8))
        ids.forEach { append($0) }
    }

    private mutating func append(_ id: AlbumID) {
        precondition(bytes.count <= Int(UInt32.max), "cover names beyond 4 GiB in one batch")
        starts.append(UInt32(bytes.count))
        bytes.append(contentsOf: id.rawValue.utf8)
        bytes.append(contentsOf: ".png".utf8)
        bytes.append(0)
    }

    /// `body` with each name as a C string (valid only during its call), in order.
    func mapNames<T>(_ body: (UnsafePointer<CChar>) -> T) -> [T] {
        bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { names in
                guard let base = names.baseAddress else { return [] }  // Empty: no names either.
                // A NUL inside an id (the index holds none) would only cut its own name short.
                return starts.map { body(base + Int($0)) }
            }
        }
    }
}
