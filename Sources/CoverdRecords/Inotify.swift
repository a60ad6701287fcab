import CLinux
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CoverdBase

/// One inotify event, with the full path it is about.
struct InotifyEvent: Equatable {
    var mask: UInt32
    var cookie: UInt32
    /// The watched directory plus the entry name; the directory itself for events on it.
    var path: String
    var name: String
    /// False when the entry's name is not valid UTF-8 (then `name` shows U+FFFD for the bad bytes).
    var validName = true

    func has(_ flag: Int32) -> Bool { mask & UInt32(bitPattern: flag) != 0 }
    var isDirectory: Bool { has(IN_ISDIR) }
}

/// Owns an inotify descriptor and the map from watch descriptors to
/// directories. Not thread-safe: owned by the watcher's queue.
final class Inotify {
    let descriptor: Int32
    private var directories: [Int32: String] = [:]
    private var watches: [String: Int32] = [:]
    private var buffer = [UInt8](repeating: 0, count: 256 * 1024)

    /// What a directory watch reports: entries created, written, moved and
    /// deleted, and the directory itself going away. Symbolic links to
    /// directories are not followed, so a link loop cannot recurse.
    static let directoryMask = UInt32(
        IN_CREATE | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF
            | IN_ONLYDIR | IN_DONT_FOLLOW | IN_EXCL_UNLINK)

    init() throws(SystemError) {
        let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else { throw SystemError("inotify_init1", path: "") }
        descriptor = fd
    }

    deinit {
        close(descriptor)
    }

    var watchCount: Int { directories.count }

    func isWatching(_ directory: String) -> Bool { watches[directory] != nil }

    func watch(_ directory: String) throws(SystemError) {
        let wd = inotify_add_watch(descriptor, directory, Inotify.directoryMask)
        guard wd >= 0 else { throw SystemError("inotify_add_watch", path: directory) }
        if let previous = directories[wd], previous != directory { watches[previous] = nil }
        directories[wd] = directory
        watches[directory] = wd
    }

    /// Stops watching `directory` and everything under it.
    func unwatch(under directory: String) {
        let prefix = directory + "/"
        for (path, wd) in watches where path == directory || path.hasPrefix(prefix) {
            inotify_rm_watch(descriptor, wd)
            watches[path] = nil
            directories[wd] = nil
        }
    }

    /// Reads every queued event without blocking. `overflowed` is true when
    /// the kernel dropped events (IN_Q_OVERFLOW): the caller must rescan.
    func readEvents() -> (events: [InotifyEvent], overflowed: Bool) {
        var events: [InotifyEvent] = []
        var overflowed = false
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            buffer.withUnsafeBytes { raw in
                var offset = 0
                let headerSize = MemoryLayout<inotify_event>.size
                while offset + headerSize <= count {
                    let wd = raw.loadUnaligned(fromByteOffset: offset, as: Int32.self)
                    let mask = raw.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
                    let cookie = raw.loadUnaligned(fromByteOffset: offset + 8, as: UInt32.self)
                    let length = Int(raw.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
                    let nameBytes = Array(raw[(offset + headerSize)..<min(offset + headerSize + length, count)].prefix(while: { $0 != 0 }))
                    let validName = String(validating: nameBytes, as: UTF8.self)
                    let name = validName ?? String(decoding: nameBytes, as: UTF8.self)
                    offset += headerSize + length
                    if mask & UInt32(IN_Q_OVERFLOW) != 0 {
                        overflowed = true
                        continue
                    }
                    guard let directory = directories[wd] else { continue }
                    if mask & UInt32(IN_IGNORED) != 0 {
                        directories[wd] = nil
                        if watches[directory] == wd { watches[directory] = nil }
                        continue
                    }
                    let path = name.isEmpty ? directory : directory + "/" + name
                    events.append(InotifyEvent(mask: mask, cookie: cookie, path: path, name: name, validName: validName != nil))
                }
            }
        }
        return (events, overflowed)
    }
}
