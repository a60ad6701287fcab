import CLinux
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Why a file could not be read whole.
public enum FileReadError: Error, Sendable, Equatable {
    case cannotOpen(errno: Int32)
    case notRegularFile(kind: String)
    case tooLarge(size: Int, limit: Int)
    case readFailed(errno: Int32)
}

/// Reads a whole regular file of at most `limit` bytes.
///
/// Opened non-blocking, so a FIFO can never hang the caller; anything that is
/// not a regular file (after following symbolic links; a loop fails with
/// ELOOP) is refused before a byte is read.
public func readRegularFile(_ path: String, limit: Int) throws(FileReadError) -> [UInt8] {
    let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
    guard fd >= 0 else { throw .cannotOpen(errno: errno) }
    defer { close(fd) }
    var info = stat()
    guard fstat(fd, &info) == 0 else { throw .readFailed(errno: errno) }
    guard info.st_mode & S_IFMT == S_IFREG else { throw .notRegularFile(kind: fileKindName(info.st_mode)) }
    let size = Int(info.st_size)
    guard size <= limit else { throw .tooLarge(size: size, limit: limit) }
    // One byte more than the file's size: a file that grew since fstat is still read whole or caught.
    var bytes = [UInt8](repeating: 0, count: size + 1)
    var filled = 0
    while true {
        if filled == bytes.count {
            guard bytes.count <= limit else { throw .tooLarge(size: filled, limit: limit) }
            bytes.append(contentsOf: repeatElement(0, count: min(64 * 1024, limit + 1 - bytes.count)))
        }
        let count = bytes.withUnsafeMutableBytes { buffer in
            read(fd, buffer.baseAddress! + filled, buffer.count - filled)
        }
        if count < 0 {
            if errno == EINTR { continue }
            throw .readFailed(errno: errno)
        }
        if count == 0 { break }
        filled += count
    }
    guard filled <= limit else { throw .tooLarge(size: filled, limit: limit) }
    bytes.removeSubrange(filled...)
    return bytes
}

/// Writes all of `bytes` to `fd`, resuming after partial writes and EINTR;
/// returns the errno of a failed write, or nil when everything was written.
public func writeAll(_ bytes: UnsafeRawBufferPointer, to fd: Int32) -> Int32? {
    var written = 0
    while written < bytes.count {
        let count = write(fd, bytes.baseAddress! + written, bytes.count - written)
        if count < 0 {
            if errno == EINTR { continue }
            return errno
        }
        if count == 0 { return EIO }  // Never for a positive count, but no endless loop if it did.
        written += count
    }
    return nil
}

/// When `fd` is a pipe with a smaller buffer, asks the kernel for one of
/// `bytes` (at most /proc/sys/fs/pipe-max-size, 1 MiB by default, for a
/// process without CAP_SYS_RESOURCE), so that a large output reaches its
/// reader in a few wake-ups of each side instead of one per 64 KiB. Returns
/// the new size, or nil when `fd` is no pipe, its buffer is already as large,
/// or the kernel refused (then the buffer stays as it was, which works too).
/// The size belongs to the pipe, and stays with it after this process exits.
@discardableResult
public func enlargePipeBuffer(_ fd: Int32, to bytes: Int32 = 1 << 20) -> Int? {
    var info = stat()
    guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFIFO else { return nil }
    // Never smaller: a parent may have made it larger already.
    guard coverd_pipe_size(fd) < bytes else { return nil }
    let size = coverd_set_pipe_size(fd, bytes)
    return size > 0 ? Int(size) : nil
}

/// The width of the terminal on `fd`, or nil when `fd` is no terminal (or
/// one that does not say, as some serial consoles): for a line that must not wrap.
public func terminalColumns(_ fd: Int32) -> Int? {
    let columns = coverd_terminal_columns(fd)
    return columns > 0 ? Int(columns) : nil
}

func fileKindName(_ mode: mode_t) -> String {
    switch mode & S_IFMT {
    case S_IFIFO: return "a FIFO"
    case S_IFDIR: return "a directory"
    case S_IFCHR: return "a character device"
    case S_IFBLK: return "a block device"
    case S_IFSOCK: return "a socket"
    case S_IFLNK: return "a symbolic link"
    default: return "a special file"
    }
}
