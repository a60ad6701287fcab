@testable import CoverdBase
@testable import CoverdCache
import CoverdTestSupport
import Foundation
import Testing

/// Where `syncfs` may stand in for every `fsync`: the journal probe, on fake `/sys` and `/proc` trees.
@Suite("Filesystems whose sync commits everything")
struct MetadataCommitsTests {
    @Test("Given jbd2's journal names, when a device is looked up, then only its own journal counts, hyphens in device names included")
    func journalNames() {
        let journals = ["vda-8", "dm-0-8", "loop12-8", "sdb1-1234", "sdc-", "sdd-x8"]
        #expect(MetadataCommits.journalNamed(device: "vda", among: journals))
        #expect(MetadataCommits.journalNamed(device: "dm-0", among: journals))
        #expect(MetadataCommits.journalNamed(device: "sdb1", among: journals))
        #expect(!MetadataCommits.journalNamed(device: "vda1", among: journals), "a partition of a journalled disk")
        #expect(!MetadataCommits.journalNamed(device: "loop1", among: journals), "a prefix of another device's name")
        #expect(!MetadataCommits.journalNamed(device: "dm", among: journals))
        #expect(!MetadataCommits.journalNamed(device: "sdc", among: journals), "no inode number")
        #expect(!MetadataCommits.journalNamed(device: "sdd", among: journals), "not a number")
        #expect(!MetadataCommits.journalNamed(device: "vda", among: []))
    }

    @Test("Given each filesystem's magic number, when decided, then only XFS, btrfs, F2FS, tmpfs and journalled ext4 group-commit, each named")
    func decisionsByMagicNumber() {
        let cases: [(magic: Int64, journal: Bool, groupCommits: Bool, name: String)] = [
            (0x5846_5342, false, true, "XFS"),
            (0x9123_683E, false, true, "btrfs"),
            (0xF2F5_2010, false, true, "F2FS"),
            (0x0102_1994, false, true, "tmpfs, which keeps nothing across a reboot"),
            (0xEF53, true, true, "ext4 with a journal"),
            (0xEF53, false, false, "ext2/3/4 with no journal listed in /proc/fs/jbd2"),
            (0x794C_7630, true, false, "overlayfs"),
            (0x6969, true, false, "NFS"),
            (0x6573_5546, true, false, "FUSE"),
            (0x4D44, true, false, "FAT"),
            (0x9FA0, true, false, "filesystem type 0x9fa0"),
            (-1, true, false, "statfs failed"),
        ]
        for (magic, journal, groupCommits, name) in cases {
            let decision = MetadataCommits.decision(magic: magic, hasJournal: journal)
            #expect(decision == .init(groupCommits: groupCommits, filesystem: name), "0x\(String(magic, radix: 16))")
        }
    }

    @Test("Given tmpfs and a missing path, when decided, then tmpfs group-commits and the missing path says why statfs failed")
    func decisionsOnRealPaths() {
        #expect(MetadataCommits.decide("/dev/shm").groupCommits, "/dev/shm must be tmpfs")
        let missing = "/nonexistent-\(UInt64.random(in: 0...UInt64.max))"
        #expect(MetadataCommits.decide(missing) == .init(groupCommits: false, filesystem: "statfs \(missing): \(SystemError.describe(ENOENT))"))
    }

    @Test("Given device numbers as glibc encodes them, when decoded, then major and minor come back")
    func deviceNumbers() {
        func encoded(_ major: UInt64, _ minor: UInt64) -> UInt64 {
            (major & 0xFFF) << 8 | (major & ~0xFFF) << 32 | (minor & 0xFF) | (minor & ~0xFF) << 12
        }
        for (major, minor) in [(259, 1), (8, 300), (7, 0), (4095, 0xFFFFF), (254, 0), (4096, 0), (0xFFFF_FFFF, 0xFFFF_FFFF)] as [(UInt64, UInt64)] {
            let decoded = MetadataCommits.numbers(of: encoded(major, minor))
            #expect(decoded.major == major && decoded.minor == minor, "\(major):\(minor)")
        }
    }

    /// A fake `/sys/dev/block` naming the test directory's own device `name`, and a fake `/proc/fs/jbd2` holding `journals`.
    func fakeTrees(in directory: TestDirectory, deviceName name: String?, journals: [String]?) throws -> (blocks: String, jbd2: String) {
        var info = stat()
        try #require(stat(directory.path, &info) == 0)
        let (major, minor) = MetadataCommits.numbers(of: UInt64(info.st_dev))
        let blocks = directory.sub("sys-dev-block"), jbd2 = directory.file("jbd2")
        if let name {
            try FileManager.default.createSymbolicLink(
                atPath: blocks + "/\(major):\(minor)", withDestinationPath: "../../devices/virtual/block/\(name)")
        }
        if let journals {
            try FileManager.default.createDirectory(atPath: jbd2, withIntermediateDirectories: true)
            for journal in journals { try FileManager.default.createDirectory(atPath: jbd2 + "/" + journal, withIntermediateDirectories: true) }
        }
        return (blocks, jbd2)
    }

    @Test("Given the device's journal listed, when probed, then it has one; without it, or without either tree, it has none")
    func journalProbe() throws {
        let cases: [(name: String?, journals: [String]?, expected: Bool)] = [
            ("vda1", ["vda1-8", "loop0-8"], true),
            ("vda1", ["vda-8", "loop0-8"], false),
            ("vda1", nil, false),
            (nil, ["vda1-8"], false),
        ]
        for (name, journals, expected) in cases {
            let directory = TestDirectory()
            let trees = try fakeTrees(in: directory, deviceName: name, journals: journals)
            let found = MetadataCommits.hasJournal(directory.path, blockDevices: trees.blocks, journals: trees.jbd2)
            #expect(found == expected, "\(name ?? "no /sys entry") with \(journals ?? ["no jbd2 directory"])")
        }
    }

    @Test("Given tmpfs and procfs, when renames are set up, then they ride on tmpfs's batches and never on procfs's")
    func renamesRideOnlyOnGroupCommits() {
        let onShm = CoverStore(cacheDirectory: "/dev/shm/coverd-test-\(UInt64.random(in: 0...UInt64.max))")
        #expect(DirectorySync.forRenames(in: onShm, flushedBy: FlushBatcher(directory: "/dev/shm"), onError: { _ in }).ridesOnBatches)
        #expect(!DirectorySync.forRenames(in: onShm, flushedBy: FlushBatcher(directory: "/proc"), onError: { _ in }).ridesOnBatches)
    }
}
