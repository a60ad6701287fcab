@testable import CoverdCore
import Testing

@Suite("Filesystems whose sync commits renames")
struct MetadataCommitsTests {
    @Test("Given jbd2's journal names, when a device is looked up, then only its own journal counts, hyphens in device names included")
    func journalNames() {
        let journals = ["vda-8", "dm-0-8", "loop12-8", "sdb1-1234"]
        #expect(MetadataCommits.journalNamed(device: "vda", among: journals))
        #expect(MetadataCommits.journalNamed(device: "dm-0", among: journals))
        #expect(MetadataCommits.journalNamed(device: "sdb1", among: journals))
        #expect(!MetadataCommits.journalNamed(device: "vda1", among: journals), "a partition of a journalled disk")
        #expect(!MetadataCommits.journalNamed(device: "loop1", among: journals), "a prefix of another device's name")
        #expect(!MetadataCommits.journalNamed(device: "dm", among: journals))
        #expect(!MetadataCommits.journalNamed(device: "vda", among: []))
    }

    @Test("Given tmpfs and procfs, when asked, then tmpfs's sync counts and procfs's does not")
    func filesystemTypes() {
        #expect(MetadataCommits.madeDurableBySyncfs("/dev/shm"))
        #expect(!MetadataCommits.madeDurableBySyncfs("/proc"))
        #expect(!MetadataCommits.madeDurableBySyncfs("/nonexistent-\(UInt64.random(in: 0...UInt64.max))"))
    }

    @Test("Given a block device in /sys/dev/block, when its number is named, then the name is the kernel's")
    func deviceNames() throws {
        let devices = (listDirectory("/sys/dev/block") ?? []).compactMap(\.name)
        let first = try #require(devices.first, "this machine lists no block device")
        let parts = first.split(separator: ":").compactMap { UInt($0) }
        try #require(parts.count == 2)
        let number = (parts[0] & 0xFFF) << 8 | (parts[0] & ~0xFFF) << 32 | (parts[1] & 0xFF) | (parts[1] & ~0xFF) << 12
        let name = MetadataCommits.blockDeviceName(number) ?? ""
        #expect(!name.isEmpty && !name.contains("/"), "\(first) named \(name)")
        #expect(MetadataCommits.blockDeviceName(0) == nil, "device 0:0 is no block device")
    }
}
