#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CoverdBase

/// Where the daemon of a cache listens (contract §8).
///
/// The rule: `$XDG_RUNTIME_DIR/coverd/<name>.sock`, where `<name>` is the
/// first 16 hex digits of the SHA-256 of the cache directory's canonical
/// absolute path (symbolic links resolved): daemons on different caches
/// never share a socket, and any client given the same cache, by whatever
/// path, finds the same one.
///
/// Where `XDG_RUNTIME_DIR` is unset (cron, `su`, a plain container), the
/// private fallback is `<cache>/coverd.sock`: per cache by construction, in
/// a directory only its user writes, never in a shared `/tmp` where another
/// user could squat the name, and the cache's lock already proves which
/// daemon owns it. A client looks in every place a daemon might have chosen
/// (`clientCandidates`), so a shell without `XDG_RUNTIME_DIR` still reaches
/// the systemd service, which has it.
///
/// A path longer than `sockaddr_un`'s 108 bytes is bound and connected
/// through `/proc/self/fd/<directory>/<name>` (as systemd does), so a deep
/// cache directory works too (`UnixSocket`).
public struct ControlSocketPath: Sendable, Equatable, CustomStringConvertible {
    /// The directory the socket lives in.
    public let directory: String
    /// The socket's file name in `directory`.
    public let name: String
    /// True for `<cache>/coverd.sock`: the directory is the cache, which is not made private.
    public let isCacheFallback: Bool

    public static let fallbackName = "coverd.sock"
    static let runtimeSubdirectory = "coverd"

    public var path: String { join(directory, name) }
    public var description: String { path }

    public init(directory: String, name: String, isCacheFallback: Bool) {
        self.directory = directory
        self.name = name
        self.isCacheFallback = isCacheFallback
    }

    /// Where a daemon on `cacheDirectory` listens, given its environment.
    public static func forDaemon(cacheDirectory: String, environment: [String: String]) throws(ControlError) -> ControlSocketPath {
        let canonical = try canonicalPath(cacheDirectory)
        if let runtime = runtimeDirectory(environment) {
            return ControlSocketPath(directory: join(runtime, runtimeSubdirectory), name: socketName(canonical), isCacheFallback: false)
        }
        return try cacheFallback(cacheDirectory: canonical)
    }

    /// The private fallback of a daemon on `cacheDirectory`: also where it listens when its runtime directory cannot be used.
    public static func cacheFallback(cacheDirectory: String) throws(ControlError) -> ControlSocketPath {
        ControlSocketPath(directory: try canonicalPath(cacheDirectory), name: fallbackName, isCacheFallback: true)
    }

    /// Where a client looks, in order: `$XDG_RUNTIME_DIR/coverd`, then
    /// `/run/user/<uid>/coverd` (where a session's `XDG_RUNTIME_DIR` would be),
    /// then `<cache>/coverd.sock`. Throws when the cache cannot be resolved
    /// (it does not exist: no daemon can run with it).
    public static func clientCandidates(cacheDirectory: String, environment: [String: String]) throws(ControlError) -> [ControlSocketPath] {
        let canonical = try canonicalPath(cacheDirectory)
        let name = socketName(canonical)
        var directories: [String] = []
        if let runtime = runtimeDirectory(environment) { directories.append(join(runtime, runtimeSubdirectory)) }
        let session = "/run/user/\(geteuid())/\(runtimeSubdirectory)"
        if !directories.contains(session) { directories.append(session) }
        return directories.map { ControlSocketPath(directory: $0, name: name, isCacheFallback: false) }
            + [ControlSocketPath(directory: canonical, name: fallbackName, isCacheFallback: true)]
    }

    /// `<16 hex digits>.sock` for a canonical cache path: 64 bits, so two caches never meet by chance.
    public static func socketName(_ canonicalCache: String) -> String {
        String(SHA256.hex(Array(canonicalCache.utf8)).prefix(16)) + ".sock"
    }

    /// `XDG_RUNTIME_DIR` when set to an absolute path; the spec says to ignore anything else.
    static func runtimeDirectory(_ environment: [String: String]) -> String? {
        guard let value = environment["XDG_RUNTIME_DIR"], value.hasPrefix("/") else { return nil }
        return normalisePath(value)
    }

    /// The directory's absolute path with every symbolic link resolved.
    public static func canonicalPath(_ directory: String) throws(ControlError) -> String {
        guard let resolved = realpath(directory, nil) else {
            throw .noPath(reason: "\(directory): \(SystemError.describe(errno))")
        }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
