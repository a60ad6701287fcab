#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Replaces (or creates) `path` with `bytes` so that a crash leaves either
/// the old file or the new one, whole: a hidden temporary file beside it
/// (`.<name>.<pid>.tmp`, which the record watcher ignores) is written and
/// flushed, renamed over `path`, and the directory flushed.
package func writeFileDurably(_ bytes: [UInt8], to path: String, mode: mode_t = 0o644) throws(SystemError) {
    let (directory, name) = splitPath(path)
    let temporary = join(directory, ".\(name).\(getpid()).tmp")
    let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
    guard fd >= 0 else { throw SystemError("create", path: temporary) }
    var failure = bytes.withUnsafeBytes { writeAll($0, to: fd) }.map { SystemError("write", path: temporary, code: $0) }
    // The umask narrowed the mode open() gave; the file keeps the one asked for (a restored record its own).
    if failure == nil && fchmod(fd, mode) != 0 { failure = SystemError("chmod", path: temporary) }
    if failure == nil && fsync(fd) != 0 { failure = SystemError("fsync", path: temporary) }
    close(fd)
    if failure == nil && rename(temporary, path) != 0 { failure = SystemError("rename", path: path) }
    if let failure {
        unlink(temporary)
        throw failure
    }
    try syncDirectory(directory)
}

/// Deletes `path` and flushes its directory, so the deletion survives a crash.
package func removeFileDurably(_ path: String) throws(SystemError) {
    guard unlink(path) == 0 else { throw SystemError("unlink", path: path) }
    try syncDirectory(splitPath(path).directory)
}

/// Flushes a directory's entries (a rename, a new or deleted file in it) to the disk.
package func syncDirectory(_ directory: String) throws(SystemError) {
    let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard fd >= 0 else { throw SystemError("open", path: directory) }
    defer { close(fd) }
    guard fsync(fd) == 0 else { throw SystemError("fsync", path: directory) }
}

/// `path`'s directory (`.` for a bare name) and last component.
package func splitPath(_ path: String) -> (directory: String, name: String) {
    guard let slash = path.lastIndex(of: "/") else { return (".", path) }
    let directory = String(path[..<slash])
    return (directory.isEmpty ? "/" : directory, String(path[path.index(after: slash)...]))
}
