#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CLinux

/// Whether a filesystem's `syncfs` makes directory changes (renames)
/// durable, so that a rename can wait for the next group commit instead of a
/// directory `fsync` of its own.
///
/// XFS forces its log, btrfs commits its transaction and F2FS writes a
/// checkpoint; tmpfs keeps nothing across a power cut anyway. ext4 (and
/// ext2/ext3, which share its magic number) only with a journal, whose commit
/// holds the rename: without one, `syncfs` writes directory blocks after its
/// cache flush, where a directory `fsync` flushes them too. A journal shows
/// as `/proc/fs/jbd2/<device>-<inode>`; when the device cannot be told, the
/// answer is no, and renames keep their directory `fsync`.
enum MetadataCommits {
    static func madeDurableBySyncfs(_ directory: String) -> Bool {
        switch coverd_filesystem_type(directory) {
        case 0x5846_5342, 0x9123_683E, 0xF2F5_2010, 0x0102_1994: return true
        case 0xEF53: return hasJournal(directory)
        default: return false
        }
    }

    /// The ext4 filesystem holding `directory` has a running journal.
    static func hasJournal(_ directory: String) -> Bool {
        var info = stat()
        guard stat(directory, &info) == 0, let name = blockDeviceName(info.st_dev) else { return false }
        let journals = (listDirectory("/proc/fs/jbd2") ?? []).compactMap(\.name)
        return journalNamed(device: name, among: journals)
    }

    /// jbd2 names a journal `<device>-<journal inode>` ("vda1-8"): the device
    /// is everything before the last hyphen (device names may hold hyphens: "dm-0-8").
    static func journalNamed(device: String, among journals: [String]) -> Bool {
        journals.contains { entry in
            guard let hyphen = entry.lastIndex(of: "-"), entry[entry.index(after: hyphen)...].allSatisfy(\.isNumber) else { return false }
            return entry[..<hyphen] == device
        }
    }

    /// The kernel's name of a block device ("vda1", "loop0", "dm-0"), from the
    /// `/sys/dev/block/<major>:<minor>` link.
    static func blockDeviceName(_ device: dev_t) -> String? {
        let major = ((device >> 8) & 0xFFF) | ((device >> 32) & ~0xFFF)
        let minor = (device & 0xFF) | ((device >> 12) & ~0xFF)
        var target = [CChar](repeating: 0, count: 4096)
        let length = readlink("/sys/dev/block/\(major):\(minor)", &target, target.count - 1)
        guard length > 0 else { return nil }
        let path = String(decoding: target[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return path.split(separator: "/").last.map(String.init)
    }
}
