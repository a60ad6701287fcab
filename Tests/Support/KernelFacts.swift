// What the kernel does here, asked of it directly: pages resident in the page cache, and pipe limits.
import CLinux
import Foundation

/// Pages of the file at `path` that are in the page cache now, by mincore(2)
/// on a mapping of it (mapping a file does not read it in).
public func residentPages(_ path: String) throws -> Int {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    defer { close(fd) }
    var info = stat()
    guard fstat(fd, &info) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    let length = Int(info.st_size)
    guard length > 0 else { return 0 }
    guard let mapping = mmap(nil, length, PROT_READ, MAP_SHARED, fd, 0), mapping != MAP_FAILED else {
        throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
    }
    defer { munmap(mapping, length) }
    let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
    var vector = [UInt8](repeating: 0, count: (length + pageSize - 1) / pageSize)
    guard mincore(mapping, length, &vector) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    return vector.filter { $0 & 1 != 0 }.count
}

/// Whether files under the temporary directory behave as the page-cache
/// tests assume, found by trying: a written file is cached, still cached
/// after its fsync, and gone from the cache once advised away. Not so on
/// tmpfs or ramfs (the pages are the file), overlays on them, or ZFS (its
/// cache is not the page cache); the tests that look at resident pages are
/// off there rather than failing or passing for nothing.
public let temporaryFilesCanLeavePageCache: Bool = {
    var base = NSTemporaryDirectory()
    while base.hasSuffix("/") { base.removeLast() }
    let path = base + "/coverd-page-cache-probe.\(getpid())"
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    guard fd >= 0 else { return false }
    defer { unlink(path) }
    let bytes = [UInt8](repeating: 0x5A, count: 64 * 1024)
    let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    let synced = written == bytes.count && fsync(fd) == 0
    let cachedAfterSync = synced && ((try? residentPages(path)) ?? 0) > 0
    let advised = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0
    close(fd)
    return cachedAfterSync && advised && (try? residentPages(path)) == 0
}()

/// The largest pipe buffer an unprivileged process may ask for
/// (/proc/sys/fs/pipe-max-size), or nil where it cannot be read.
public var pipeMaxSize: Int? {
    (try? String(contentsOfFile: "/proc/sys/fs/pipe-max-size", encoding: .utf8))
        .flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
}
