#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CLinux
import CoverdBase

/// Whether a filesystem's `syncfs` is as good as an `fsync` of every file
/// and directory changed before it: file data, inodes and directory entries
/// (renames) all durable when it returns. Only there does coverd group its
/// flushes (`FlushBatcher`) and let renames wait for the next one.
///
/// XFS forces its log, btrfs commits its transaction and F2FS writes a
/// checkpoint (unless mounted with `checkpoint=disable`, which coverd cannot
/// see); tmpfs keeps nothing across a power cut anyway. ext4 (and ext2/ext3,
/// which share its magic number) only with a journal, whose commit holds the
/// changes: without one, `syncfs` writes inode and directory blocks after
/// its cache flush, where `fsync` flushes them too. An internal journal
/// shows as `/proc/fs/jbd2/<device>-<inode>`; when the device cannot be
/// told (no `/sys` or `/proc/fs/jbd2` in a sandbox, an external journal),
/// the answer is no, and each file and rename gets its own `fsync`.
enum MetadataCommits {
    /// What was found about a directory's filesystem, and so how its covers are made durable.
    struct Decision: Equatable {
        /// `syncfs` makes everything durable there (see above).
        var groupCommits: Bool
        /// The filesystem, as an operator would want it named in the log.
        var filesystem: String
    }

    static func decide(_ directory: String) -> Decision {
        let magic = coverd_filesystem_type(directory)
        let failure = magic == -1 ? SystemError("statfs", path: directory) : nil
        return decision(magic: magic, statfsFailure: failure, hasJournal: hasJournal(directory))
    }

    /// The decision for a `statfs` magic number (-1: `statfs` failed, with `statfsFailure` saying why).
    static func decision(magic: Int64, statfsFailure: SystemError? = nil, hasJournal: @autoclosure () -> Bool) -> Decision {
        switch magic {
        case 0x5846_5342: return Decision(groupCommits: true, filesystem: "XFS")
        case 0x9123_683E: return Decision(groupCommits: true, filesystem: "btrfs")
        case 0xF2F5_2010: return Decision(groupCommits: true, filesystem: "F2FS")
        case 0x0102_1994: return Decision(groupCommits: true, filesystem: "tmpfs, which keeps nothing across a reboot")
        case 0xEF53:
            return hasJournal()
                ? Decision(groupCommits: true, filesystem: "ext4 with a journal")
                : Decision(groupCommits: false, filesystem: "ext2/3/4 with no journal listed in /proc/fs/jbd2")
        case -1: return Decision(groupCommits: false, filesystem: statfsFailure.map { "\($0)" } ?? "statfs failed")
        case 0x794C_7630: return Decision(groupCommits: false, filesystem: "overlayfs")
        case 0x6969: return Decision(groupCommits: false, filesystem: "NFS")
        case 0x6573_5546: return Decision(groupCommits: false, filesystem: "FUSE")
        case 0x4D44: return Decision(groupCommits: false, filesystem: "FAT")
        default: return Decision(groupCommits: false, filesystem: "filesystem type 0x\(String(magic, radix: 16))")
        }
    }

    /// The ext4 filesystem holding `directory` has an internal journal (the roots are parameters for tests).
    static func hasJournal(_ directory: String, blockDevices: String = "/sys/dev/block", journals: String = "/proc/fs/jbd2") -> Bool {
        var info = stat()
        guard stat(directory, &info) == 0, let name = blockDeviceName(UInt64(info.st_dev), in: blockDevices) else { return false }
        return journalNamed(device: name, among: (listDirectory(journals) ?? []).compactMap(\.name))
    }

    /// jbd2 names a journal `<device>-<journal inode>` ("vda1-8"): the device
    /// is everything before the last hyphen (device names may hold hyphens: "dm-0-8").
    static func journalNamed(device: String, among journals: [String]) -> Bool {
        journals.contains { entry in
            guard let hyphen = entry.lastIndex(of: "-") else { return false }
            let inode = entry.utf8[entry.utf8.index(after: hyphen)...]
            return !inode.isEmpty && inode.allSatisfy { $0 >= 0x30 && $0 <= 0x39 } && entry[..<hyphen] == device
        }
    }

    /// glibc's `major`/`minor` of a `dev_t` (the macros are not imported into Swift).
    static func numbers(of device: UInt64) -> (major: UInt64, minor: UInt64) {
        let major = ((device >> 8) & 0xFFF) | UInt64(UInt32(truncatingIfNeeded: device >> 32) & ~0xFFF)
        let minor = (device & 0xFF) | UInt64(UInt32(truncatingIfNeeded: device >> 12) & ~0xFF)
        return (major, minor)
    }

    /// The kernel's name of a block device ("vda1", "loop0", "dm-0"), from the
    /// `<major>:<minor>` link under `blockDevices`.
    static func blockDeviceName(_ device: UInt64, in blockDevices: String) -> String? {
        let (major, minor) = numbers(of: device)
        var target = [CChar](repeating: 0, count: 4096)
        let length = readlink("\(blockDevices)/\(major):\(minor)", &target, target.count)
        guard length > 0, length < target.count else { return nil }  // a full buffer may be cut short
        let path = String(decoding: target[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return path.split(separator: "/").last.map(String.init)
    }
}
