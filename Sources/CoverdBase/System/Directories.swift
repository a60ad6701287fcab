#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `mkdir -p`. An existing directory is left alone without a write, so this
/// also works where the path is read-only (a sandboxed service's home).
package func makeDirectories(_ path: String, mode: mode_t = 0o755) throws(SystemError) {
    var existing = stat()
    if stat(path, &existing) == 0 {
        guard existing.st_mode & S_IFMT == S_IFDIR else { throw SystemError("mkdir", path: path, code: ENOTDIR) }
        return
    }
    var current = ""
    for part in path.split(separator: "/") {
        current += "/" + part
        if mkdir(current, mode) != 0 && errno != EEXIST {
            throw SystemError("mkdir", path: current)
        }
    }
    var info = stat()
    guard stat(path, &info) == 0 else { throw SystemError("stat", path: path) }
    guard info.st_mode & S_IFMT == S_IFDIR else { throw SystemError("mkdir", path: path, code: ENOTDIR) }
}
