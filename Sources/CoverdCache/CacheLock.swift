#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CoverdBase

/// Why `coverd run` (or `coverd sync`) may not use a cache.
public enum CacheLockError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Another process holds the lock; its pid, when the lock file names one.
    case held(path: String, pid: Int32?)
    case system(SystemError)

    public var description: String {
        switch self {
        case .held(let path, let pid):
            let holder = pid.map { "another coverd (pid \($0))" } ?? "another coverd"
            return "\(holder) is already running with this cache (it holds \(path))"
        case .system(let error):
            return "cannot lock the cache: \(error)"
        }
    }
}

/// One daemon per cache: `coverd run` (or `coverd sync`) holds an exclusive
/// `flock` on `<cache>/coverd.lock` from before it sweeps leftovers until it
/// exits. A second daemon on the same cache would delete the first one's
/// temporary files as leftovers and race it for every cover. The kernel drops
/// the lock when the process dies, however it dies, so a `kill -9` leaves
/// nothing to clean up. Readers (`status`, `verify`) do not take it.
public final class CacheLock: Sendable {
    public static let fileName = "coverd.lock"
    /// Open from `init` to `deinit`; locked unless `isHeld` is false.
    private let descriptor: Int32
    /// False where the filesystem refuses `flock` (ENOLCK, EOPNOTSUPP): the
    /// daemon runs without the guard, as it did before there was one, and
    /// says so. (Not tried on such a filesystem.)
    public let isHeld: Bool

    public init(cacheDirectory: String) throws(CacheLockError) {
        let path = join(cacheDirectory, CacheLock.fileName)
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .system(SystemError("open", path: path)) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            if code == ENOLCK || code == EOPNOTSUPP {
                descriptor = fd
                isHeld = false
                return
            }
            let holder = CacheLock.pid(in: fd)
            close(fd)
            throw code == EWOULDBLOCK ? .held(path: path, pid: holder) : .system(SystemError("flock", path: path, code: code))
        }
        // The pid only names the holder in a second start's message; the lock
        // is the flock, so a pid that cannot be written (a full disk) is no failure.
        let text = Array("\(getpid())\n".utf8)
        if ftruncate(fd, 0) == 0 { _ = text.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) } }
        descriptor = fd
        isHeld = true
    }

    deinit {
        close(descriptor)
    }

    /// The pid a holder wrote, if the file holds one.
    private static func pid(in fd: Int32) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 16)
        let count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        let text = String(decoding: buffer[..<count], as: UTF8.self).trimmingWhitespace
        return Int32(text).flatMap { $0 > 0 ? $0 : nil }
    }
}
