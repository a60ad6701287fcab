import CLinux
import CoverdBase
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Owns an in-memory file (memfd) whose bytes are sealed: nothing can change
/// them, and it goes with the process. Libraries that want a file name open it
/// as `path`. Sendable because its only state is immutable.
final class SealedMemoryFile: Sendable {
    let descriptor: Int32
    /// `/proc/self/fd/<descriptor>`, valid while this object lives.
    let path: String

    /// `name` shows only in /proc's links, for whoever looks at the process.
    init(name: String, contents: [UInt8]) throws(SystemError) {
        let fd = coverd_sealable_memory_file(name)
        guard fd >= 0 else { throw SystemError("create the in-memory file", path: name) }
        let path = "/proc/self/fd/\(fd)"
        var failure: SystemError?
        if let code = contents.withUnsafeBytes({ writeAll($0, to: fd) }) {
            failure = SystemError("write", path: path, code: code)
        } else if coverd_seal_memory_file(fd) != 0 {
            failure = SystemError("seal", path: path)
        } else if fchmod(fd, 0o400) != 0 {
            failure = SystemError("chmod 0400", path: path)
        } else if access(path, R_OK) != 0 {
            // Its users open it by name: without /proc that fails here, once, and says why.
            failure = SystemError("access", path: path)
        }
        if let failure {
            close(fd)
            throw failure
        }
        descriptor = fd
        self.path = path
    }

    deinit {
        close(descriptor)
    }
}
