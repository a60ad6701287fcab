import CoverdBase
import CoverdModel
import CoverdTestSupport
import Foundation
import Testing

@Suite("End to end: watching records", .serialized)
struct WatchingEndToEndTests {
    @Test("Given a running daemon, when a directory is created later and records appear in it, then they are fetched")
    func newDirectoriesAreWatched() throws {
        let world = try World()
        try world.cover("a.png", seed: 1)
        try world.cover("b.png", seed: 2)
        let daemon = try world.startDaemon()
        try daemon.waitUntilReady()
        let deep = world.records + "/x/y/z"
        try FileManager.default.createDirectory(atPath: deep, withIntermediateDirectories: true)
        try writeAtomically(world.album("Deep", world.server.url("a.png")), to: deep + "/deep.json")
        try daemon.waitForStatus("the deep album cached") { $0.cached == 1 }
        // A directory made elsewhere, filled, then moved in whole.
        let outside = world.directory.sub("outside/batch")
        try writeAtomically(world.album("Moved in", world.server.url("b.png")), to: outside + "/m.json")
        try FileManager.default.moveItem(atPath: outside, toPath: world.records + "/batch")
        try daemon.waitForStatus("the moved-in album cached") { $0.cached == 2 }
        // The directory moved out again: its album leaves.
        try FileManager.default.moveItem(atPath: world.records + "/batch", toPath: world.directory.path + "/outside/back")
        try daemon.waitForStatus("the moved-out album gone") { $0.albums == 1 }
        #expect(try daemon.stop() == 0)
    }

    @Test("Given a record file moved in and out, when the daemon watches, then it follows both moves")
    func filesMovedInAndOut() throws {
        let world = try World()
        try world.cover("a.png", seed: 1)
        let daemon = try world.startDaemon()
        try daemon.waitUntilReady()
        let outside = world.directory.sub("outside") + "/a.json"
        try writeAtomically(world.album("A", world.server.url("a.png")), to: outside)
        try FileManager.default.moveItem(atPath: outside, toPath: world.records + "/a.json")
        try daemon.waitForStatus("cached") { $0.cached == 1 }
        try FileManager.default.moveItem(atPath: world.records + "/a.json", toPath: outside)
        try daemon.waitForStatus("gone") { $0.albums == 0 }
        #expect(try daemon.stop() == 0)
    }

    @Test("Given a record renamed within the directory, when the daemon follows it, then nothing is downloaded again")
    func renameIsNotRefetched() throws {
        let world = try World()
        try world.cover("a.png", seed: 1)
        try world.record("a.json", world.album("A", world.server.url("a.png")))
        let daemon = try world.startDaemon()
        try daemon.waitForStatus("cached") { $0.cached == 1 }
        try FileManager.default.moveItem(atPath: world.records + "/a.json", toPath: world.records + "/renamed.json")
        try daemon.waitForStatus("the record path follows the rename") { $0.entries.first?.record == world.records + "/renamed.json" }
        // A record dropped after the rename: once its cover is fetched, a refetch the rename caused would have been too.
        try world.cover("marker.png", seed: 2)
        try world.record("marker.json", world.album("Marker", world.server.url("marker.png")))
        try daemon.waitForStatus("the marker cached") { $0.cached == 2 }
        #expect(try world.server.requestCount("/a.png") == 1)
        #expect(try daemon.stop() == 0)
    }

    @Test("Given a record being written slowly, when it is still open, then it is not parsed until closed")
    func partialWritesWait() throws {
        let world = try World()
        try world.cover("a.png", seed: 1)
        try world.cover("b.png", seed: 2)
        let daemon = try world.startDaemon()
        try daemon.waitUntilReady()
        let path = world.records + "/slow.json"
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o644)
        #expect(fd >= 0)
        let text = Array(world.album("Slow", world.server.url("a.png")).utf8)
        let half = text.count / 2
        #expect(write(fd, text, half) == half)
        // Another record written after the half: once it is processed, the half-file's events were too.
        try world.record("marker.json", world.album("Marker", world.server.url("b.png")))
        try daemon.waitForStatus("the marker cached") { $0.cached == 1 }
        #expect(!daemon.log.contains("slow.json"))
        #expect(text[half...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == text.count - half)
        #expect(close(fd) == 0)
        try daemon.waitForStatus("the slow record cached") { $0.cached == 2 }
        #expect(!daemon.log.contains("not valid JSON"))
        #expect(try daemon.stop() == 0)
    }

    @Test("Given a FIFO, a symlink loop and a directory named like records, when scanned, then the daemon neither hangs nor crashes")
    func specialFiles() throws {
        let world = try World()
        try world.cover("a.png", seed: 1)
        #expect(mkfifo(world.records + "/fifo.json", 0o644) == 0)
        #expect(symlink(world.records + "/loop.json", world.records + "/loop.json") == 0)
        try FileManager.default.createDirectory(atPath: world.records + "/dir.json", withIntermediateDirectories: true)
        #expect(symlink(world.records + "/target.json", world.records + "/link.json") == 0)
        try world.record("target.json", world.album("Target", world.server.url("a.png")))
        let daemon = try world.startDaemon()
        let snapshot = try daemon.waitForStatus("the target cached") { $0.cached == 1 }
        #expect(snapshot.albums == 1)
        try waitUntil("the FIFO and the loop reported") {
            daemon.log.contains("fifo.json: not a regular file (a FIFO)") && daemon.log.contains("loop.json: cannot open")
        }
        #expect(daemon.isRunning)
        #expect(try daemon.stop() == 0)
    }

    @Test("Given a file that becomes invalid, when rewritten, then its albums stay until it is fixed or deleted")
    func invalidFileKeepsAlbums() throws {
        let world = try World()
        try world.cover("a.png", seed: 1)
        try world.record("a.json", world.album("A", world.server.url("a.png")))
        let daemon = try world.startDaemon()
        try daemon.waitForStatus("cached") { $0.cached == 1 }
        try world.record("a.json", "{ broken")
        try waitUntil("the broken file reported") { daemon.log.contains("a.json: not valid JSON") }
        #expect(try daemon.status().cached == 1)
        try FileManager.default.removeItem(atPath: world.records + "/a.json")
        try daemon.waitForStatus("gone after deletion") { $0.albums == 0 }
        #expect(try daemon.stop() == 0)
    }

    @Test("Given leftover temporary files from a crash, when the daemon starts, then they are removed")
    func leftoversRemovedAtStart() throws {
        let world = try World()
        try FileManager.default.createDirectory(atPath: world.cache + "/covers", withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: world.cache + "/covers/.x.123.tmp", contents: Data([1, 2])))
        let daemon = try world.startDaemon()
        try waitUntil("ready") { daemon.log.contains("event=ready") }
        #expect(world.strayFiles().isEmpty)
        #expect(try daemon.stop() == 0)
    }

    @Test("Given a record file broken while the daemon was stopped, when it restarts, then the albums and covers stay until the file is deleted")
    func brokenFileAtRestartKeepsAlbums() throws {
        let world = try World()
        let png = try world.cover("a.png", seed: 1)
        try world.record("a.json", world.album("A", world.server.url("a.png")))
        let first = try world.startDaemon()
        let id = try first.waitForStatus("cached") { $0.cached == 1 }.entries[0].id
        #expect(try first.stop() == 0)
        try world.record("a.json", "[{ broken")
        let second = try world.startDaemon()
        try second.waitUntilReady()
        try waitUntil("the broken file reported") { second.log.contains("a.json: not valid JSON") }
        #expect(try second.status().cached == 1)
        #expect(readBytes(world.coverPath(id)) == png)
        #expect(!second.log.contains("event=album_removed"))
        try FileManager.default.removeItem(atPath: world.records + "/a.json")
        try second.waitForStatus("gone once the file is deleted") { $0.albums == 0 }
        #expect(!FileManager.default.fileExists(atPath: world.coverPath(id)))
        #expect(try second.stop() == 0)
    }

    @Test("Given the records directory deleted, when it is made again and filled, then the new records are fetched")
    func recreatedRoot() throws {
        let world = try World()
        try world.cover("a.png", seed: 1)
        try world.cover("b.png", seed: 2)
        try world.record("a.json", world.album("A", world.server.url("a.png")))
        let daemon = try world.startDaemon()
        try daemon.waitForStatus("cached") { $0.cached == 1 }
        try FileManager.default.removeItem(atPath: world.records)
        try daemon.waitForStatus("the deleted directory's album gone") { $0.albums == 0 }
        try FileManager.default.createDirectory(atPath: world.records, withIntermediateDirectories: true)
        try world.record("b.json", world.album("B", world.server.url("b.png")))
        try daemon.waitForStatus("the new record cached") { $0.cached == 1 && $0.entries.first?.title == "B" }
        #expect(try daemon.stop() == 0)
    }

    @Test("Given thousands of records, when SIGTERM arrives during the first scan, then coverd still exits 0")
    func sigtermDuringStartup() throws {
        let world = try World()
        for file in 0..<40 {
            let albums = (0..<250).map { world.album("T\(file)-\($0)", "http://127.0.0.1:9/\(file)/\($0).png") }
            try world.record("r\(file).json", "[" + albums.joined(separator: ",") + "]")
        }
        let daemon = try world.startDaemon()
        try waitUntil("the daemon to start") { daemon.log.contains("event=started") }
        #expect(try daemon.stop(signal: SIGTERM, timeout: 30) == 0)
        #expect(world.strayFiles().isEmpty)
    }
}

@Suite("End to end: fetching", .serialized)
struct FetchingEndToEndTests {
    @Test("Given --concurrency and --per-host, when many slow covers sync, then the server never sees more at once")
    func limitsHold() throws {
        let world = try World()
        var albums: [String] = []
        for index in 0..<12 {
            try world.cover("c\(index).png", seed: index + 1)
            albums.append(world.album("Album \(index)", world.server.url("c\(index).png?delay_ms=150")))
        }
        try world.record("a.json", "[" + albums.joined(separator: ",") + "]")
        let daemon = try world.startDaemon(["--concurrency", "8", "--per-host", "3"])
        try daemon.waitForStatus("all cached") { $0.cached == 12 }
        let seen = try world.server.requests()
        #expect(seen.maxInFlight <= 3)
        #expect(seen.maxInFlight >= 2)
        #expect(seen.userAgents == ["coverd/\(CoverdVersion.string)"])
        #expect(try daemon.stop() == 0)
    }

    @Test("Given redirects, when synced, then three hops reach the cover and a loop fails after five")
    func redirects() throws {
        let world = try World()
        let png = try world.cover("r.png", seed: 7)
        try world.record("a.json", "[\(world.album("Chain", world.server.url("fault/redirect/3/r.png"))), \(world.album("Loop", world.server.url("fault/redirect-loop/0")))]")
        let daemon = try world.startDaemon()
        let snapshot = try daemon.waitForStatus("one cached, one failed") { $0.cached == 1 && $0.failed == 1 }
        let chain = try #require(snapshot.entries.first { $0.title == "Chain" })
        #expect(readBytes(world.coverPath(chain.id)) == png)
        #expect(snapshot.entries.first { $0.title == "Loop" }?.error == "more than 5 redirects")
        #expect(try daemon.stop() == 0)
    }

    @Test("Given bodies that are not PNG covers, when synced, then each fails with its reason and nothing is stored")
    func badBodies() throws {
        let world = try World()
        try world.server.serve(Array("BM".utf8) + [UInt8](repeating: 0, count: 100), at: "picture.bmp")
        try world.server.serve(PNGFixture.withBrokenCRC(PNGFixture.make()), at: "crc.png")
        try world.server.serve(PNGFixture.claiming(width: 100_000, height: 100_000), at: "bomb.png")
        let url = world.server.url
        try world.record("a.json", "[\(world.album("HTML", url("fault/html"))), \(world.album("BMP", url("picture.bmp"))), \(world.album("CRC", url("crc.png"))), \(world.album("Bomb", url("bomb.png")))]")
        let daemon = try world.startDaemon()
        let snapshot = try daemon.waitForStatus("four failed") { $0.failed == 4 }
        func error(_ title: String) -> String? { snapshot.entries.first { $0.title == title }?.error }
        #expect(error("HTML") == "unsupported image format: html (not an image)")
        #expect(error("BMP") == "unsupported image format: bmp")
        #expect(error("CRC")?.contains("bad CRC in IDAT") == true)
        #expect(error("Bomb")?.contains("too large (100000×100000") == true)
        #expect(try FileManager.default.contentsOfDirectory(atPath: world.cache + "/covers").isEmpty)
        #expect(world.strayFiles().isEmpty)
        #expect(try daemon.stop() == 0)
    }

    @Test("Given a body over the size cap, with and without Content-Length, when synced, then both fail as too large")
    func sizeCap() throws {
        let world = try World()
        let file = world.directory.file("coverd.toml")
        try writeAtomically("[fetch]\nmax_bytes = 65536\n", to: file)
        let url = world.server.url
        try world.record("a.json", "[\(world.album("Announced", url("fault/huge?bytes=10000000&length=1"))), \(world.album("Chunked", url("fault/huge?bytes=10000000&length=0")))]")
        let daemon = try world.startDaemon(["--config", file])
        let snapshot = try daemon.waitForStatus("both failed") { $0.failed == 2 }
        for entry in snapshot.entries { #expect(entry.error == "response is larger than the 65536-byte limit") }
        #expect(daemon.isRunning)
        #expect(try daemon.stop() == 0)
    }

    @Test("Given a URL cached for one album, when another album with it is added later, then no second request is made")
    func sharedAcrossBatches() throws {
        let world = try World()
        let png = try world.cover("shared.png", seed: 5)
        try world.record("a.json", world.album("First", world.server.url("shared.png")))
        let daemon = try world.startDaemon()
        try daemon.waitForStatus("first cached") { $0.cached == 1 }
        try world.record("b.json", world.album("Second", world.server.url("shared.png")))
        let snapshot = try daemon.waitForStatus("second cached") { $0.cached == 2 }
        for entry in snapshot.entries { #expect(readBytes(world.coverPath(entry.id)) == png) }
        #expect(try world.server.requestCount("/shared.png") == 1)
        #expect(try daemon.stop() == 0)
    }

    @Test("Given a cover whose server never answers, when more covers from that host are added, then they are cached without waiting for it")
    func silentServerDoesNotHoldUpItsHost() throws {
        let world = try World()
        // No low-speed limit: the silent request stays in flight until the 120 s total timeout, far past this test.
        let config = world.directory.file("coverd.toml")
        try writeAtomically("[fetch]\nlow_speed_limit = 0\n", to: config)
        try world.record("silent.json", world.album("Silent", world.server.url("fault/silent")))
        let daemon = try world.startDaemon(["--config", config])
        try waitUntil("the silent request to arrive") { try world.server.requests().inFlight == 1 }

        // When: three covers from the same host arrive while it waits.
        var albums: [String] = []
        for index in 0..<3 {
            try world.cover("fast\(index).png", seed: index + 1)
            albums.append(world.album("Fast \(index)", world.server.url("fast\(index).png")))
        }
        try world.record("fast.json", "[" + albums.joined(separator: ",") + "]")

        // Then: they are cached (with libcurl's PIPEWAIT they were parked until the silent one ended).
        let snapshot = try daemon.waitForStatus("the three covers cached") { $0.cached == 3 }
        #expect(snapshot.entries.filter { $0.title.hasPrefix("Fast ") }.allSatisfy { $0.state == "cached" })
        let silent = try #require(snapshot.entries.first { $0.title == "Silent" })
        #expect(silent.state == "pending" && silent.error == nil, "still waiting for its first answer")
        #expect(try world.server.requests().inFlight >= 1)
        #expect(try daemon.stop() == 0)
    }

    @Test("Given a download in progress, when its record is deleted, then the transfer is cancelled")
    func deletionCancelsDownload() throws {
        let world = try World()
        try world.server.serve(PNGFixture.make(width: 64, height: 64), at: "slow.png")
        try world.record("a.json", world.album("Slow", world.server.url("fault/slow/50/slow.png")))
        let daemon = try world.startDaemon()
        try waitUntil("the download to start") { try world.server.requests().inFlight == 1 }
        try FileManager.default.removeItem(atPath: world.records + "/a.json")
        try daemon.waitForStatus("the album gone") { $0.albums == 0 }
        try waitUntil("the server to see the connection dropped", timeout: 10) { try world.server.requests().inFlight == 0 }
        #expect(try FileManager.default.contentsOfDirectory(atPath: world.cache + "/covers").isEmpty)
        #expect(world.strayFiles().isEmpty)
        #expect(try daemon.stop() == 0)
    }
}
