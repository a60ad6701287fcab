import CoverdBase
import CoverdCache

/// Which process seems to run a daemon on a cache, read without taking the
/// lock (`status --follow` is a reader): the pid the last holder wrote into
/// `coverd.lock`, if that process is still alive and is a `coverd`. Only to
/// say more when the socket cannot be reached; never a test of anything.
public enum CacheHolder {
    public static func likelyPid(cacheDirectory: String) -> Int32? {
        guard let bytes = try? readRegularFile(join(cacheDirectory, CacheLock.fileName), limit: 64),
            let pid = Int32(String(decoding: bytes, as: UTF8.self).trimmingWhitespace), pid > 0,
            let name = try? readRegularFile("/proc/\(pid)/comm", limit: 64)
        else { return nil }
        return String(decoding: name, as: UTF8.self).trimmingWhitespace == "coverd" ? pid : nil
    }
}
