#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A durable file change that failed, and whether the change itself had
/// happened: only the flush of its directory failed, so the file is new (or
/// gone) but a crash could still undo that.
package struct DurableFileError: Error, Sendable, CustomStringConvertible {
    package var error: SystemError
    /// True when the rename or unlink was done and only the directory's flush failed.
    package var changed: Bool

    package var description: String {
        changed ? "\(error) (the change was made, but may not survive a crash)" : "\(error)"
    }
}

/// Replaces (or creates) `path` with `bytes` so that a crash leaves either
/// the old file or the new one, whole: a hidden temporary file beside it
/// (`.<name>.<pid>-<random>.tmp`, which the record watcher ignores) is
/// created exclusively, written and flushed, renamed over `path`, and the
/// directory flushed. `path` itself must not be a symbolic link: the rename
/// would replace the link, not what it points to.
/// `mode`: the exact permission bits (a restored record gets its own back);
/// nil gives a new file 0644 narrowed by the umask, as any program's would be.
package func writeFileDurably(_ bytes: [UInt8], to path: String, mode: mode_t? = nil) throws(DurableFileError) {
    let (directory, name) = splitPath(path)
    let temporary = join(directory, ".\(name).\(getpid())-\(String(UInt32.random(in: 0...UInt32.max), radix: 36)).tmp")
    let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode ?? 0o644)
    guard fd >= 0 else { throw DurableFileError(error: SystemError("create", path: temporary), changed: false) }
    var failure = bytes.withUnsafeBytes { writeAll($0, to: fd) }.map { SystemError("write", path: temporary, code: $0) }
    // The umask narrowed the mode open() gave; an exact mode asked for is restored.
    if failure == nil, let mode, fchmod(fd, mode) != 0 { failure = SystemError("chmod", path: temporary) }
    if failure == nil && fsync(fd) != 0 { failure = SystemError("fsync", path: temporary) }
    close(fd)
    if failure == nil && rename(temporary, path) != 0 { failure = SystemError("rename", path: path) }
    if let failure {
        unlink(temporary)
        throw DurableFileError(error: failure, changed: false)
    }
    do {
        try syncDirectory(directory)
    } catch {
        throw DurableFileError(error: error, changed: true)
    }
}

/// Deletes `path` and flushes its directory, so the deletion survives a crash.
package func removeFileDurably(_ path: String) throws(DurableFileError) {
    guard unlink(path) == 0 else { throw DurableFileError(error: SystemError("unlink", path: path), changed: false) }
    do {
        try syncDirectory(splitPath(path).directory)
    } catch {
        throw DurableFileError(error: error, changed: true)
    }
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
