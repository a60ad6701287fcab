import CoverdImages
import CoverdModel
import CoverdTestSupport
import Foundation
import Testing

@Suite("End to end: syncing covers", .serialized)
struct SyncEndToEndTests {
    @Test("Given every record form, when the daemon runs, then each album is cached with the served bytes")
    func everyRecordForm() throws {
        let world = try World()
        var expected: [String: [UInt8]] = [:]
        for index in 0..<6 { expected["c\(index).png"] = try world.cover("c\(index).png", seed: index + 1) }
        let url = world.server.url
        try world.record("single.json", world.album("Single", url("c0.png"), extra: ", \"year\": 1999"))
        try world.record("array.json", "[\(world.album("Array one", url("c1.png"))), {\"album\": \"Array two\", \"artist\": \"Artist\", \"coverUrl\": \"\(url("c2.png"))\"}]")
        try world.record("wrapped.json", "{\"albums\": [\(world.album("Wrapped", url("c3.png")))]}")
        let nested = world.directory.sub("albums/deep/er")
        try writeAtomically(world.album("Nested", url("c4.png")), to: nested + "/n.json")
        let archive = try ArchiveFixture.archive([.init(title: "Archived", artist: "Artist", coverURL: url("c5.png"))])
        try writeAtomically([UInt8](archive), to: world.records + "/albums.bin")

        let daemon = try world.startDaemon()
        let snapshot = try daemon.waitForStatus("six covers cached") { $0.cached == 6 }
        #expect(snapshot.albums == 6 && snapshot.pending == 0 && snapshot.failed == 0)
        for entry in snapshot.entries {
            let served = expected[String(entry.coverURL.split(separator: "/").last ?? "")]
            #expect(entry.state == "cached")
            #expect(entry.path == world.coverPath(entry.id))
            #expect(readBytes(world.coverPath(entry.id)) == served, "bytes of \(entry.id)")
            #expect(entry.error == nil)
            #expect(entry.record.hasPrefix(world.records + "/"))
        }
        #expect(Set(snapshot.entries.map(\.title)) == ["Single", "Array one", "Array two", "Wrapped", "Nested", "Archived"])
        #expect(snapshot.entries.first { $0.title == "Archived" }?.record == world.records + "/albums.bin")
        #expect(try daemon.stop() == 0)
    }

    @Test("Given covers synced, when the daemon reports them cached, then none of them is left in the page cache",
          .enabled(if: temporaryFilesCanLeavePageCache, "the temporary directory is on tmpfs"))
    func coversLeaveThePageCache() throws {
        let world = try World()
        let url = world.server.url
        var albums: [String] = []
        for index in 0..<5 {
            // Large enough to span pages: 64,000 pixels of noise.
            try world.server.serve(PNGFixture.make(width: 320, height: 200, seed: index + 40), at: "big\(index).png")
            albums.append(world.album("Big \(index)", url("big\(index).png")))
        }
        try world.record("big.json", "[\(albums.joined(separator: ", "))]")
        let daemon = try world.startDaemon()
        let snapshot = try daemon.waitForStatus("five covers cached") { $0.cached == 5 }
        #expect(snapshot.entries.count == 5)
        for entry in snapshot.entries {
            let path = try #require(entry.path)
            #expect(try residentPages(path) == 0, "\(path) is still in the page cache")
        }
        #expect(try daemon.stop() == 0)
    }

    @Test("Given a running daemon, when records are added, changed and deleted, then the cache follows without a restart")
    func followsChanges() throws {
        let world = try World()
        let first = try world.cover("first.png", seed: 1)
        let second = try world.cover("second.png", seed: 2)
        let replacement = try world.cover("replacement.png", seed: 3)
        let url = world.server.url
        let daemon = try world.startDaemon()
        try daemon.waitUntilReady()

        // Added while running.
        try world.record("a.json", "[\(world.album("One", url("first.png"))), \(world.album("Two", url("second.png")))]")
        var snapshot = try daemon.waitForStatus("two covers cached") { $0.cached == 2 }
        let one = try #require(snapshot.entries.first { $0.title == "One" })
        let two = try #require(snapshot.entries.first { $0.title == "Two" })
        #expect(readBytes(world.coverPath(one.id)) == first)

        // A changed cover_url refetches.
        try world.record("a.json", "[\(world.album("One", url("replacement.png"))), \(world.album("Two", url("second.png")))]")
        try waitUntil("the replacement cover") { readBytes(world.coverPath(one.id)) == replacement }
        #expect(try world.server.requestCount("/replacement.png") == 1)
        #expect(readBytes(world.coverPath(two.id)) == second)
        #expect(try world.server.requestCount("/second.png") == 1)

        // A deleted record leaves status and the cache.
        try FileManager.default.removeItem(atPath: world.records + "/a.json")
        snapshot = try daemon.waitForStatus("no albums") { $0.albums == 0 }
        #expect(!FileManager.default.fileExists(atPath: world.coverPath(one.id)))
        #expect(!FileManager.default.fileExists(atPath: world.coverPath(two.id)))
        #expect(daemon.log.contains("event=album_removed"))
        #expect(try daemon.stop() == 0)
    }

    @Test("Given a 404 among good covers, when synced, then it fails with the reason and its siblings are cached")
    func notFoundFails() throws {
        let world = try World()
        try world.cover("good.png", seed: 1)
        let url = world.server.url
        try world.record("a.json", "[\(world.album("Good", url("good.png"))), \(world.album("Gone", url("gone.png")))]")
        let daemon = try world.startDaemon()
        let snapshot = try daemon.waitForStatus("one cached, one failed") { $0.cached == 1 && $0.failed == 1 }
        let gone = try #require(snapshot.entries.first { $0.title == "Gone" })
        #expect(gone.state == "failed")
        #expect(gone.path == nil)
        #expect(gone.error?.contains("HTTP 404") == true)
        #expect(!FileManager.default.fileExists(atPath: world.coverPath(gone.id)))
        #expect(daemon.log.contains("event=cover_failed"))
        #expect(daemon.log.contains("http_status=404"))
        #expect(try daemon.stop() == 0)
    }

    @Test("Given one URL shared by three albums in two files, when synced, then it is requested once and all are cached")
    func sharedURLOnce() throws {
        let world = try World()
        let png = try world.cover("shared.png", seed: 9)
        let url = world.server.url("shared.png")
        try world.record("a.json", "[\(world.album("A", url)), \(world.album("B", url))]")
        try world.record("b.json", world.album("C", url))
        let daemon = try world.startDaemon()
        let snapshot = try daemon.waitForStatus("three cached") { $0.cached == 3 }
        #expect(try world.server.requestCount("/shared.png") == 1)
        for entry in snapshot.entries { #expect(readBytes(world.coverPath(entry.id)) == png) }
        #expect(try daemon.stop() == 0)
    }

    @Test("Given everything cached, when the daemon restarts, then it makes no request at all")
    func restartMakesNoRequest() throws {
        let world = try World()
        let url = world.server.url
        var albums: [String] = []
        for index in 0..<20 {
            try world.cover("c\(index).png", seed: index + 1)
            albums.append(world.album("Album \(index)", url("c\(index).png")))
        }
        try world.record("a.json", "[" + albums.joined(separator: ",") + "]")
        let first = try world.startDaemon()
        try first.waitForStatus("twenty cached") { $0.cached == 20 }
        #expect(try first.stop() == 0)
        try world.server.resetCounts()

        let second = try world.startDaemon()
        try waitUntil("the restarted daemon to log ready") { second.log.contains("event=ready") }
        let snapshot = try second.waitForStatus("twenty cached after restart") { $0.cached == 20 }
        #expect(snapshot.albums == 20)
        #expect(try second.stop() == 0)
        #expect(try world.server.requests().total == 0)
        #expect(!second.log.contains("event=album_added"))
    }

    @Test("Given a sync in progress, when SIGTERM arrives, then coverd exits 0 and leaves no temporary file")
    func sigtermIsClean() throws {
        let world = try World()
        let url = world.server.url
        var albums: [String] = []
        for index in 0..<40 {
            try world.cover("c\(index).png", seed: index + 1)
            albums.append(world.album("Album \(index)", url("c\(index).png?delay_ms=200")))
        }
        try world.record("a.json", "[" + albums.joined(separator: ",") + "]")
        let daemon = try world.startDaemon(["--concurrency", "4"])
        try daemon.waitForStatus("some covers cached") { $0.cached >= 2 }
        #expect(try daemon.stop(signal: SIGTERM, timeout: 10) == 0)
        #expect(world.strayFiles().isEmpty)
        #expect(daemon.log.contains("event=stopping"))
        for entry in try status(cache: world.cache).entries where entry.state == "cached" {
            #expect(try PNGValidator().validate(readBytes(world.coverPath(entry.id)) ?? []).width > 0)
        }
    }

    @Test("Given a 500 then a 200, when synced, then the retry caches the cover")
    func transientRetried() throws {
        let world = try World()
        let png = try world.cover("flaky.png", seed: 4)
        try world.record("a.json", world.album("Flaky", world.server.url("fault/flaky/1/flaky.png")))
        let daemon = try world.startDaemon()
        let snapshot = try daemon.waitForStatus("cached after a retry", timeout: 20) { $0.cached == 1 }
        #expect(readBytes(world.coverPath(snapshot.entries[0].id)) == png)
        #expect(try world.server.requestCount("/fault/flaky/1/flaky.png") == 2)
        #expect(daemon.log.contains("attempt 1"))
        #expect(try daemon.stop() == 0)
    }

    @Test("Given a corrupted cached PNG, when verified, then verify fails naming it, and a reload refetches it")
    func verifyAndReload() throws {
        let cover = try OneCachedCover(seed: 5)
        let world = cover.world, daemon = cover.daemon, png = cover.png, id = cover.id
        #expect(try runCoverd(["verify", "--cache", world.cache]).status == 0)

        var corrupted = png
        corrupted[33 + 8 + 5] ^= 0xFF  // inside the IDAT data: only its CRC can tell
        let handle = try #require(FileHandle(forWritingAtPath: world.coverPath(id)))
        try handle.write(contentsOf: Data(corrupted))
        try handle.close()
        let verify = try runCoverd(["verify", "--cache", world.cache])
        #expect(verify.status == 1)
        #expect(verify.stdout.contains(world.coverPath(id)))
        #expect(verify.stdout.contains("bad CRC"))

        daemon.send(SIGHUP)
        try waitUntil("the cover to be fetched again") { readBytes(world.coverPath(id)) == png }
        try daemon.waitForStatus("cached again") { $0.cached == 1 }
        #expect(try world.server.requestCount("/c.png") == 2)
        #expect(try runCoverd(["verify", "--cache", world.cache]).status == 0)
        #expect(try daemon.stop() == 0)
    }

    @Test("Given a cover verify marked bad and then restored from a backup, when reloaded, then it stays cached with its mark cleared and is not fetched again")
    func restoredAfterVerify() throws {
        // Given
        let cover = try OneCachedCover(seed: 7)
        var times = stat()
        #expect(stat(cover.path, &times) == 0)
        var corrupted = cover.png
        corrupted[33 + 8 + 5] ^= 0xFF
        try cover.rewrite(with: corrupted, keepingTimesOf: times)
        #expect(try runCoverd(["verify", "--cache", cover.world.cache]).status == 1)
        #expect(try status(cache: cover.world.cache).album(cover.id)?.state == "failed", "verify marked it")
        // The backup, with its size and times: only the mark says to read it again.
        try cover.rewrite(with: cover.png, keepingTimesOf: times)
        // When
        cover.daemon.send(SIGHUP)
        // Then
        let after = try cover.daemon.waitForStatus("the mark cleared") { $0.album(cover.id)?.state == "cached" }
        #expect(after.album(cover.id)?.error == nil)
        #expect(readBytes(cover.path) == cover.png)
        #expect(try cover.world.server.requestCount("/c.png") == 1)
        #expect(try runCoverd(["verify", "--cache", cover.world.cache]).status == 0)
        #expect(try cover.daemon.stop() == 0)
    }

    @Test("Given bit rot in a cached PNG (same size, same mtime), when verified and reloaded, then it is found and fetched again")
    func bitRot() throws {
        let cover = try OneCachedCover(seed: 6)
        let world = cover.world, daemon = cover.daemon, png = cover.png, path = cover.path
        var before = stat()
        #expect(stat(path, &before) == 0)
        var rotten = png
        rotten[33 + 8 + 7] ^= 0x01
        try cover.rewrite(with: rotten, keepingTimesOf: before)
        var after = stat()
        #expect(stat(path, &after) == 0 && after.st_size == before.st_size && after.st_mtim.tv_nsec == before.st_mtim.tv_nsec)

        // A reload alone trusts an unchanged size and mtime: only verify can tell.
        let verify = try runCoverd(["verify", "--cache", world.cache])
        #expect(verify.status == 1 && verify.stdout.contains(path))
        daemon.send(SIGHUP)
        try waitUntil("the rotten cover replaced") { readBytes(path) == png }
        #expect(try world.server.requestCount("/c.png") == 2)
        #expect(try daemon.stop() == 0)
    }

    @Test("Given broken records, when scanned, then each is logged with file and reason and valid albums still load")
    func brokenRecordsLogged() throws {
        let world = try World()
        try world.cover("ok.png", seed: 1)
        try world.record("good.json", "[\(world.album("Good", world.server.url("ok.png"))), {\"title\": \"No URL\", \"artist\": \"X\"}]")
        try world.record("bad.json", "{ not json")
        try world.record("ignored.json.part", "{ also not json")
        try writeAtomically("[", to: world.records + "/.hidden.json")
        let daemon = try world.startDaemon(["--config", try world.noLookupConfig()])
        try daemon.waitForStatus("the good album cached") { $0.cached == 1 }
        try waitUntil("both problems logged") {
            daemon.log.contains("\(world.records)/bad.json: not valid JSON") && daemon.log.contains("missing required field 'cover_url'")
        }
        #expect(daemon.log.contains("\(world.records)/good.json: album 2 (line 1)"))
        #expect(!daemon.log.contains("ignored.json.part"))
        #expect(!daemon.log.contains(".hidden.json"))
        #expect(try daemon.stop() == 0)
    }
}
