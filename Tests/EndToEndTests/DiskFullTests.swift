import CoverdTestSupport
import Foundation
import Testing

/// Runs a command and returns its exit status.
@discardableResult
func shell(_ arguments: [String]) throws -> Int32 {
    try runTool(arguments).status
}

/// A world whose cache is a small tmpfs, unmounted when released.
final class SmallDiskWorld {
    let world: World
    var expected: [String: [UInt8]] = [:]

    init(megabytes: Int) throws {
        world = try World()
        try FileManager.default.createDirectory(atPath: world.cache, withIntermediateDirectories: true)
        try #require(try shell(["mount", "-t", "tmpfs", "-o", "size=\(megabytes)m", "tmpfs", world.cache]) == 0)
    }

    deinit {
        _ = try? shell(["umount", "-l", world.cache])
    }

    /// Serves `count` covers of about 235 KB and returns their records.
    func albums(_ range: Range<Int>) throws -> [String] {
        try range.map { index in
            let png = PNGFixture.make(width: 280, height: 280, seed: index + 1)
            try world.server.serve(png, at: "big\(index).png")
            expected["Big \(index)"] = png
            return world.album("Big \(index)", world.server.url("big\(index).png"))
        }
    }

    /// Syncs the albums of `range` (one record file) with a daemon and stops it cleanly.
    @discardableResult
    func syncThenStop(_ range: Range<Int>) throws -> StatusSnapshot {
        try world.record("a.json", "[" + (try albums(range)).joined(separator: ",") + "]")
        let daemon = try world.startDaemon()
        let synced = try daemon.waitForStatus("the covers cached") { $0.cached == range.count }
        #expect(try daemon.stop() == 0)
        return synced
    }

    /// Fills the cache's disk to the last byte, as another program would.
    func fill() throws {
        try shell(["dd", "if=/dev/zero", "of=\(world.cache)/filler", "bs=64k"])  // Runs until the disk is full.
        var space = statvfs()
        #expect(statvfs(world.cache, &space) == 0 && space.f_bavail == 0, "the disk is full")
    }

    /// Every stored cover is byte for byte the one served: nothing partial.
    func checkCovers(_ snapshot: StatusSnapshot) {
        for entry in snapshot.entries where entry.state == "cached" {
            #expect(readBytes(world.coverPath(entry.id)) == expected[entry.title], "\(entry.title) is whole")
        }
        let served = Set(expected.values)
        for name in (try? FileManager.default.contentsOfDirectory(atPath: world.cache + "/covers")) ?? [] where name.hasSuffix(".png") {
            #expect(served.contains(readBytes(world.cache + "/covers/" + name) ?? []), "\(name) is a complete served cover")
        }
    }
}

@Suite("End to end: a full disk", .serialized)
struct DiskFullTests {
    @Test("Given a cache on a small tmpfs, when coverd fills it, then it says so, stores nothing partial, keeps running, and completes once space is freed",
          .enabled(if: getuid() == 0, "mounting a tmpfs needs root (CI runs as root)"))
    func coverdFillsTheDisk() throws {
        let disk = try SmallDiskWorld(megabytes: 6)
        let world = disk.world
        try world.record("a.json", "[" + (try disk.albums(0..<30)).joined(separator: ",") + "]")
        let config = world.directory.file("coverd.toml")
        try writeAtomically("[retry]\ninitial_delay = 0.5\nstorage_max_delay = 1\n", to: config)
        let daemon = try world.startDaemon(["--config", config])

        let full = try daemon.waitForStatus("the disk to be full", timeout: 60) { snapshot in
            snapshot.cached > 0 && snapshot.pending > 0
                && snapshot.entries.contains { $0.state == "pending" && $0.error?.contains("No space left on device") == true }
        }
        #expect(full.albums == 30 && full.failed == 0)
        try waitUntil("the log to explain") { daemon.log.contains("No space left on device") && daemon.log.contains("event=cover_failed") }
        #expect(daemon.isRunning)
        disk.checkCovers(full)

        #expect(try shell(["mount", "-o", "remount,size=64m", world.cache]) == 0)
        let done = try daemon.waitForStatus("all cached once space is freed", timeout: 60) { $0.cached == 30 }
        disk.checkCovers(done)
        #expect(try daemon.stop() == 0)
        #expect(world.strayFiles().isEmpty)
    }

    @Test("Given a cache filled to the last byte by another program, when albums arrive, then status still says why, and all complete once freed",
          .enabled(if: getuid() == 0, "mounting a tmpfs needs root (CI runs as root)"))
    func somethingElseFillsTheDisk() throws {
        let disk = try SmallDiskWorld(megabytes: 8)
        let world = disk.world
        let config = world.directory.file("coverd.toml")
        try writeAtomically("[retry]\ninitial_delay = 0.5\nstorage_max_delay = 1\n", to: config)
        try world.record("a.json", "[" + (try disk.albums(0..<3)).joined(separator: ",") + "]")
        let daemon = try world.startDaemon(["--config", config])
        try daemon.waitForStatus("the first covers cached") { $0.cached == 3 }

        let filler = world.cache + "/filler"
        try shell(["dd", "if=/dev/zero", "of=\(filler)", "bs=64k"])  // Runs until the disk is full.
        try world.record("b.json", "[" + (try disk.albums(3..<8)).joined(separator: ",") + "]")
        // The index writes that record this need the space coverd kept in reserve.
        let full = try daemon.waitForStatus("status to report the full disk", timeout: 60) { snapshot in
            snapshot.albums == 8 && snapshot.entries.filter { $0.state == "pending" && $0.error?.contains("No space left on device") == true }.count == 5
        }
        disk.checkCovers(full)
        #expect(daemon.isRunning)
        try waitUntil("the log to say the retries wait for room") { daemon.log.contains("still no room in the cache for ") }

        try FileManager.default.removeItem(atPath: filler)
        let done = try daemon.waitForStatus("all cached once space is freed", timeout: 60) { $0.cached == 8 }
        disk.checkCovers(done)
        #expect(try daemon.stop() == 0)
        #expect(world.strayFiles().isEmpty)
    }

    @Test("Given no free-space margin and a nearly full disk, when a cover does not fit, then its write fails with ENOSPC and leaves nothing behind",
          .enabled(if: getuid() == 0, "mounting a tmpfs needs root (CI runs as root)"))
    func writesMeetENOSPC() throws {
        let disk = try SmallDiskWorld(megabytes: 8)
        let world = disk.world
        let config = world.directory.file("coverd.toml")
        try writeAtomically("[retry]\ninitial_delay = 0.5\nstorage_max_delay = 1\n[limits]\nmin_free_bytes = 0\n", to: config)
        let daemon = try world.startDaemon(["--config", config])
        try daemon.waitUntilReady()
        // Leave about 100 KiB: room for the index, not for a 235 KB cover.
        var space = statvfs()
        #expect(statvfs(world.cache, &space) == 0)
        let free = Int(space.f_bavail) * Int(space.f_frsize)
        try shell(["dd", "if=/dev/zero", "of=\(world.cache)/filler", "bs=4096", "count=\((free - 100 * 1024) / 4096)"])
        try world.record("a.json", "[" + (try disk.albums(0..<2)).joined(separator: ",") + "]")
        let full = try daemon.waitForStatus("the writes to fail", timeout: 60) { snapshot in
            snapshot.pending == 2 && snapshot.entries.allSatisfy { $0.error?.contains("write ") == true && $0.error?.contains("No space left on device") == true }
        }
        disk.checkCovers(full)
        #expect(try daemon.stop() == 0)
        #expect(world.strayFiles().isEmpty, "a failed write left its temporary file")
    }

    @Test("Given a daemon stopped cleanly and its cache then filled to the last byte, when it starts again, then it opens its index with its reserve's room, keeps running, and completes once space is freed",
          .enabled(if: getuid() == 0, "mounting a tmpfs needs root (CI runs as root)"))
    func restartOnAFullDisk() throws {
        // Given
        let disk = try SmallDiskWorld(megabytes: 8)
        let world = disk.world
        try disk.syncThenStop(0..<3)
        try world.record("b.json", "[" + (try disk.albums(3..<5)).joined(separator: ",") + "]")
        try disk.fill()
        // When
        let daemon = try world.startDaemon()
        // Then
        try daemon.waitUntilReady()
        #expect(daemon.isRunning, "\(daemon.log.suffix(2000))")
        try waitUntil("the log to say the reserve was used") { daemon.log.contains("open the index without the space reserve") }
        #expect(!FileManager.default.fileExists(atPath: "\(world.cache)/.coverd-reserve"))
        let waiting = try daemon.waitForStatus("the new covers waiting for space", timeout: 60) { snapshot in
            snapshot.albums == 5 && snapshot.cached == 3 && snapshot.pending == 2
        }
        disk.checkCovers(waiting)
        try FileManager.default.removeItem(atPath: "\(world.cache)/filler")
        let done = try daemon.waitForStatus("all cached once space is freed", timeout: 60) { $0.cached == 5 }
        disk.checkCovers(done)
        try waitUntil("the reserve made again") { FileManager.default.fileExists(atPath: "\(world.cache)/.coverd-reserve") }
        #expect(try daemon.stop() == 0)
        #expect(world.strayFiles().isEmpty)
    }

    @Test("Given a damaged index on a disk filled to the last byte, when the daemon starts, then it moves the index aside, makes a new one with its reserve's room, and says both",
          .enabled(if: getuid() == 0, "mounting a tmpfs needs root (CI runs as root)"))
    func damagedIndexOnAFullDisk() throws {
        // Given
        let disk = try SmallDiskWorld(megabytes: 8)
        let world = disk.world
        try disk.syncThenStop(0..<2)
        #expect(FileManager.default.fileExists(atPath: "\(world.cache)/.coverd-reserve"))
        try Data(repeating: 0x5A, count: 8192).write(to: URL(fileURLWithPath: "\(world.cache)/index.sqlite3"))
        try disk.fill()
        // When
        let daemon = try world.startDaemon()
        // Then
        try daemon.waitUntilReady()
        try waitUntil("the log to say both") {
            daemon.log.contains("moved it to \(world.cache)/index.sqlite3.corrupt-")
                && daemon.log.contains("open the index without the space reserve")
        }
        #expect(daemon.isRunning)
        try FileManager.default.removeItem(atPath: "\(world.cache)/filler")
        let done = try daemon.waitForStatus("both covers in the new index", timeout: 60) { $0.albums == 2 && $0.cached == 2 }
        disk.checkCovers(done)
        #expect(try daemon.stop() == 0)
    }

    @Test("Given a daemon stopped cleanly and its cache then filled to the last byte, when status and verify run, then both read the index, and verify names a bad cover and says it could not mark it",
          .enabled(if: getuid() == 0, "mounting a tmpfs needs root (CI runs as root)"))
    func commandsOnAFullDisk() throws {
        let disk = try SmallDiskWorld(megabytes: 8)
        let world = disk.world
        let synced = try disk.syncThenStop(0..<3)
        let broken = world.coverPath(synced.entries[0].id)
        var bytes = try #require(readBytes(broken))
        bytes[bytes.count / 2] ^= 0xFF
        try Data(bytes).write(to: URL(fileURLWithPath: broken))
        try disk.fill()
        #expect(!FileManager.default.fileExists(atPath: world.cache + "/index.sqlite3-shm"), "a clean stop left no shared-memory file")

        let report = try runCoverd(["status", "--json", "--cache", world.cache])
        #expect(report.status == 0, "\(report.stderr)")
        let snapshot = try StatusSnapshot(json: report.stdout)
        #expect(snapshot.albums == 3 && snapshot.cached == 3)

        let verify = try runCoverd(["verify", "--cache", world.cache])
        #expect(verify.status == 1)
        #expect(verify.stdout.contains("bad: \(broken)"), "\(verify.stdout)")
        #expect(verify.stderr.contains("could not mark") && verify.stderr.contains("index"), "\(verify.stderr)")
        #expect(try status(cache: world.cache).cached == 3, "nothing was marked")
    }

    @Test("Given a records directory on a tmpfs with one page free, when add writes a record larger than that, then it exits 1 naming ENOSPC, and leaves neither the record nor a temporary file",
          .enabled(if: getuid() == 0, "mounting a tmpfs needs root (CI runs as root)"))
    func addOnAFullDisk() throws {
        // Given: the first write of the record fills the disk part-way; the next one meets ENOSPC.
        let world = try World()
        try FileManager.default.createDirectory(atPath: world.records, withIntermediateDirectories: true)
        try #require(try shell(["mount", "-t", "tmpfs", "-o", "size=4k", "tmpfs", world.records]) == 0)
        defer { _ = try? shell(["umount", "-l", world.records]) }
        let long = String(repeating: "x", count: 1000)

        // When
        let add = try runCoverd([
            "add", "--records", world.records, "--title", long, "--artist", long, "--genre", long,
            "--cover-url", "http://127.0.0.1:9/" + String(repeating: "c", count: 3000) + ".png",
        ])

        // Then
        #expect(add.status == 1)
        #expect(add.stderr.contains("No space left on device (errno 28)"), "\(add.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: world.records).isEmpty)
    }
}
