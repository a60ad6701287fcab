import CoverdModel
import CoverdTestSupport
import Foundation
import Testing

@Suite("End to end: crash safety", .serialized)
struct CrashSafetyTests {
    @Test("Given a throttled sync of 1,000 covers, when coverd is killed with SIGKILL three times, then every stored cover is whole and none is fetched twice")
    func killNineDuringSync() throws {
        let world = try World()
        var expected: [AlbumID: [UInt8]] = [:]
        var urlOf: [AlbumID: String] = [:]
        for file in 0..<10 {
            var albums: [String] = []
            for index in 0..<100 {
                let number = file * 100 + index
                let png = PNGFixture.make(width: 12 + number % 9, height: 10, seed: number + 1)
                try world.server.serve(png, at: "c\(number).png")
                let title = "Album \(number)"
                let id = AlbumID.derived(artist: "Artist", title: title)
                expected[id] = png
                urlOf[id] = "/c\(number).png"
                albums.append(world.album(title, world.server.url("c\(number).png?delay_ms=30")))
            }
            try world.record("r\(file).json", "[" + albums.joined(separator: ",") + "]")
        }
        let coversDirectory = world.cache + "/covers"
        func storedCovers() -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: coversDirectory)) ?? []).filter { $0.hasSuffix(".png") && !$0.hasPrefix(".") }
        }
        // For each cover stored before a kill: how often it had been requested by then.
        var storedBeforeKills: [String: Int] = [:]
        for threshold in [150, 450, 750] {
            let daemon = try world.startDaemon()
            try waitUntil("\(threshold) covers stored", timeout: 60) { storedCovers().count >= threshold }
            daemon.send(SIGKILL)
            try waitUntil("the kill") { !daemon.isRunning }

            // Every file in covers/ is a complete PNG identical to its source.
            let stored = storedCovers()
            for name in stored {
                let id = try AlbumID(validating: String(name.dropLast(4)))
                #expect(readBytes(coversDirectory + "/" + name) == expected[id], "\(name) after the kill at \(threshold)")
            }
            let countsAtKill = try world.server.requests().paths
            for name in stored where storedBeforeKills[name] == nil {
                let id = try AlbumID(validating: String(name.dropLast(4)))
                storedBeforeKills[name] = countsAtKill[urlOf[id] ?? ""] ?? 0
            }
            // The index is consistent: readable, and every cached row has its valid file.
            let verify = try runCoverd(["verify", "--cache", world.cache])
            #expect(verify.status == 0, "\(verify.stdout)")
            let leftovers = world.strayFiles()
            let restarted = try world.startDaemon()
            try restarted.waitUntilReady()
            for name in leftovers { #expect(!FileManager.default.fileExists(atPath: world.cache + "/" + name), "leftover \(name)") }
            restarted.send(SIGKILL)
            try waitUntil("the second kill") { !restarted.isRunning }
        }

        let daemon = try world.startDaemon()
        try daemon.waitForStatus("all 1,000 cached", timeout: 120) { $0.cached == 1000 }
        #expect(try daemon.stop() == 0)
        let counts = try world.server.requests().paths
        for (name, requestsWhenStored) in storedBeforeKills {
            let id = try AlbumID(validating: String(name.dropLast(4)))
            #expect(counts[urlOf[id] ?? ""] == requestsWhenStored, "\(name) was downloaded again after it was stored")
        }
        for (id, png) in expected { #expect(readBytes(world.coverPath(id.rawValue)) == png) }
        #expect(world.strayFiles().isEmpty)
        print("crash safety: \(storedBeforeKills.count) covers stored before the kills, none downloaded again; \(counts.values.reduce(0, +)) requests for 1,000 covers")
    }

    @Test("Given a daemon running on a cache, when a second starts on the same cache, then it exits 1 naming the first's pid and the first runs on; once the first stops, a new one starts")
    func oneDaemonPerCache() throws {
        let world = try World()
        try world.recordAlbums(1, seed: 2)
        let first = try world.startDaemon()
        try first.waitForStatus("cached") { $0.cached == 1 }
        let second = try runCoverd(["run", "--records", world.records, "--cache", world.cache])
        #expect(second.status == 1)
        #expect(second.stderr.contains("another coverd (pid \(first.pid)) is already running with this cache"), "\(second.stderr)")
        #expect(first.isRunning)
        #expect(world.strayFiles().isEmpty)
        #expect(try first.stop() == 0)
        let third = try world.startDaemon()
        try third.waitUntilReady()
        #expect(try third.stop() == 0)
    }

    @Test("Given an index overwritten with garbage while coverd was stopped, when it starts, then it moves the index aside, says so, and caches every album again")
    func corruptIndexIsReplaced() throws {
        let world = try World()
        try world.syncThenStop(3, seed: 5)
        try Data(repeating: 0x41, count: 8192).write(to: URL(fileURLWithPath: world.cache + "/index.sqlite3"))

        let second = try world.startDaemon()
        // `status` itself fails on the garbage until the daemon has moved it aside.
        try waitUntil("the index moved aside") { second.log.contains("moved it to \(world.cache)/index.sqlite3.corrupt-") }
        try second.waitForStatus("three cached in the new index") { $0.cached == 3 }
        let aside = try FileManager.default.contentsOfDirectory(atPath: world.cache).filter { $0.hasPrefix("index.sqlite3.corrupt-") }
        #expect(aside.count == 1, "\(aside)")
        #expect(world.strayFiles().isEmpty)
        #expect(try second.stop() == 0)
    }

    @Test("Given an index whose table page is damaged (it still opens), when coverd starts, then it exits 1 having moved the index aside, and the next start caches every album again")
    func indexDamagedPastItsHeader() throws {
        let world = try World()
        try world.syncThenStop(1, seed: 4)
        // Page 2 is the albums table's root (one WITHOUT ROWID table, no other index); page 1, the schema, stays whole.
        // A clean stop checkpointed and removed the log, which would otherwise hold the page's latest copy.
        #expect(!FileManager.default.fileExists(atPath: world.cache + "/index.sqlite3-wal"))
        let header = try #require(readBytes(world.cache + "/index.sqlite3")?.prefix(18))
        let pageSize = Int(header[16]) << 8 | Int(header[17])
        let handle = try #require(FileHandle(forUpdatingAtPath: world.cache + "/index.sqlite3"))
        try handle.seek(toOffset: UInt64(pageSize))
        handle.write(Data(repeating: 0x41, count: pageSize))
        try handle.close()

        let damaged = try world.startDaemon()
        try waitUntil("the damaged start to exit") { !damaged.isRunning }
        let log = damaged.log
        #expect(damaged.exitStatus == 1)
        #expect(log.contains("moved it to \(world.cache)/index.sqlite3.corrupt-"), "\(log.suffix(2000))")
        #expect(!FileManager.default.fileExists(atPath: world.cache + "/index.sqlite3"))
        let aside = try FileManager.default.contentsOfDirectory(atPath: world.cache).filter { $0.hasPrefix("index.sqlite3.corrupt-") && !$0.hasSuffix("-wal") }
        #expect(aside.count == 1, "\(aside)")
        let next = try world.startDaemon()
        try next.waitForStatus("cached in a new index") { $0.cached == 1 }
        #expect(try next.stop() == 0)
    }

    @Test("Given covers cached, when one is deleted and one cut short while coverd is stopped, then after a restart both are fetched again, each named in the log, and no other cover is requested")
    func coversDamagedWhileStopped() throws {
        // Given
        let world = try World()
        var pngs: [String: [UInt8]] = [:]
        var albums: [String] = []
        for index in 0..<12 {
            pngs["c\(index)"] = try world.cover("c\(index).png", seed: index + 3)
            albums.append(world.album("Album \(index)", world.server.url("c\(index).png")))
        }
        try world.record("a.json", "[" + albums.joined(separator: ",") + "]")
        let first = try world.startDaemon()
        let ids = try first.waitForStatus("twelve cached") { $0.cached == 12 }.entries.map(\.id).sorted()
        #expect(try first.stop() == 0)
        try world.server.resetCounts()

        // When: one cover deleted, another cut to half its length
        let deleted = ids[2], cut = ids[7]
        try FileManager.default.removeItem(atPath: world.coverPath(deleted))
        let original = try #require(readBytes(world.coverPath(cut)))
        try Data(original.prefix(original.count / 2)).write(to: URL(fileURLWithPath: world.coverPath(cut)))
        let second = try world.startDaemon()
        try second.waitUntilReady()

        // Then: the index said all twelve were cached at READY; the check after it finds the two
        try waitUntil("both covers cached again") {
            second.log.contains("cached cover for album \(deleted):") && second.log.contains("cached cover for album \(cut):")
        }
        let rows = try second.waitForStatus("all twelve cached without an error") { snapshot in
            snapshot.entries.count == 12 && snapshot.entries.allSatisfy { $0.state == "cached" && $0.error == nil }
        }.entries
        #expect(readBytes(world.coverPath(cut)) == original)
        let served = rows.first { $0.id == deleted }.map { String($0.coverURL.split(separator: "/").last ?? "").replacingOccurrences(of: ".png", with: "") }
        #expect(readBytes(world.coverPath(deleted)) == served.flatMap { pngs[$0] })
        try waitUntil("the check's summary in the log") { second.log.contains("covers the index lists as cached") }
        #expect(second.log.contains("cached cover was missing: album \(deleted) at \(world.coverPath(deleted)); fetching it again"))
        #expect(second.log.contains("cached cover was corrupt: "))
        #expect(second.log.contains("album \(cut) at \(world.coverPath(cut)); fetching it again"))
        #expect(second.log.contains("checked the 12 covers the index lists as cached in "))
        #expect(second.log.contains(": 2 to fetch again"))
        #expect(try world.server.requests().total == 2)
        #expect(try runCoverd(["verify", "--cache", world.cache]).status == 0)
        #expect(try second.stop() == 0)
    }
}
