import CoverdTestSupport
import Foundation
import Testing

@Suite("End to end: coverd sync", .serialized)
struct SyncCommandEndToEndTests {
    /// `coverd sync` on the world's records and cache.
    func sync(_ world: World, _ arguments: [String] = [], timeout: Double = 60) throws -> CommandResult {
        try runCoverd(["sync", "--records", world.records, "--cache", world.cache] + arguments, timeout: timeout)
    }

    /// The last line of `text`, without its newline.
    func lastLine(_ text: String) -> String {
        String(text.split(separator: "\n", omittingEmptySubsequences: true).last ?? "")
    }

    @Test("Given every cover served, when coverd sync runs on a pipe, then it exits 0 with every cover cached, plain progress lines and a summary line last, and leaves no temporary file")
    func everyCoverCached() throws {
        let world = try World()
        try world.recordAlbums(12, seed: 40)

        // When
        let result = try sync(world, ["--concurrency", "2"])

        // Then
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let snapshot = try status(cache: world.cache)
        #expect(snapshot.albums == 12 && snapshot.cached == 12, "\(snapshot.entries)")
        for index in 0..<12 {
            let entry = try #require(snapshot.entries.first { $0.title == "Album \(index)" })
            #expect(readBytes(world.coverPath(entry.id)) == readBytes(world.server.root + "/c\(index).png"), "the served bytes")
        }
        #expect(!result.stdout.contains("\r") && !result.stdout.contains("\u{1B}"), "\(result.stdout)")
        #expect(result.stdout.hasPrefix("0/12 albums done") || result.stdout.contains("/12 albums done ("), "\(result.stdout)")
        #expect(lastLine(result.stdout).hasPrefix("12 albums: 12 cached, 0 pending, 0 failed; done in "), "\(result.stdout)")
        #expect(result.stdout.hasSuffix("\n"))
        #expect(world.strayFiles().isEmpty)
        #expect(result.stderr.isEmpty, "warnings and worse only, and there were none: \(result.stderr)")
    }

    @Test("Given every cover cached by an earlier sync, when coverd sync runs again, then it exits 0 at once without a request")
    func secondSyncDownloadsNothing() throws {
        let world = try World()
        try world.recordAlbums(5, seed: 60)
        #expect(try sync(world).status == 0)
        try world.server.resetCounts()

        // When
        let again = try sync(world)

        // Then
        #expect(again.status == 0, "\(again.stdout)\(again.stderr)")
        #expect(try world.server.requests().total == 0)
        #expect(lastLine(again.stdout).hasPrefix("5 albums: 5 cached, 0 pending, 0 failed; done in "), "\(again.stdout)")
    }

    @Test("Given a 404 among good covers, when coverd sync runs, then it exits 1 listing that album with id, artist – title and reason, and the others are cached")
    func notFoundIsListed() throws {
        let world = try World()
        try world.cover("good.png", seed: 7)
        try world.record("a.json", "[\(world.album("Good", world.server.url("good.png"))), \(world.album("Gone", world.server.url("gone.png"), artist: "Someone"))]")

        // When
        let result = try sync(world)

        // Then
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        let gone = try #require(try status(cache: world.cache).entries.first { $0.title == "Gone" })
        #expect(gone.state == "failed")
        #expect(result.stdout.contains("failed: \(gone.id) (Someone – Gone): HTTP 404"), "\(result.stdout)")
        #expect(lastLine(result.stdout).hasPrefix("2 albums: 1 cached, 0 pending, 1 failed; done in "), "\(result.stdout)")
        #expect(lastLine(result.stdout).hasSuffix("1 not cached, listed above"), "\(result.stdout)")
        #expect(result.stderr.contains("event=cover_failed"), "the error is logged too: \(result.stderr)")
    }

    @Test("Given a cover that always answers 503, when coverd sync runs with --give-up-after 2, then it retries, gives up within seconds, and exits 1 listing it as still failing")
    func transientFailureIsGivenUp() throws {
        let world = try World()
        try world.cover("good.png", seed: 8)
        try world.record("a.json", "[\(world.album("Good", world.server.url("good.png"))), \(world.album("Busy", world.server.url("fault/status/503")))]")
        let began = Date()

        // When
        let result = try sync(world, ["--give-up-after", "2"], timeout: 30)

        // Then
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        #expect(Date().timeIntervalSince(began) < 15)
        #expect(try world.server.requestCount("/fault/status/503") >= 2, "retried before giving up")
        let busy = try #require(try status(cache: world.cache).entries.first { $0.title == "Busy" })
        #expect(busy.state == "pending", "left for the daemon or the next sync")
        #expect(result.stdout.contains("failed: \(busy.id) (Artist – Busy): HTTP 503"), "\(result.stdout)")
        #expect(result.stdout.contains("sync gave up"), "\(result.stdout)")
        #expect(lastLine(result.stdout).hasPrefix("2 albums: 1 cached, 1 pending, 0 failed; done in "), "\(result.stdout)")
    }

    @Test("Given albums without a cover URL, one the archive has and one found nowhere, when coverd sync runs, then it waits for both lookups and exits 1 listing the one with no cover found")
    func waitsForLookups() throws {
        let release = mbid(40, 1), unknown = mbid(40, 2)
        let world = try LookupWorld(["releases": [["id": release, "title": "Found", "artist_credit": "Someone"]]])
        try world.record("a.json", [
            ["title": "Found", "artist": "Someone", "mbid": release, "id": "found"],
            ["title": "Nowhere", "artist": "Nobody", "mbid": unknown, "id": "nowhere"],
        ])

        // When
        let result = try runCoverd(["sync", "--records", world.records, "--cache", world.cache, "--config", world.config], timeout: 60)

        // Then
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        let snapshot = try status(cache: world.cache)
        #expect(snapshot.album("found")?.state == "cached" && snapshot.album("found")?.source == "release")
        #expect(snapshot.album("nowhere")?.state == "failed")
        #expect(result.stdout.contains("failed: nowhere (Nobody – Nowhere): no cover found"), "\(result.stdout)")
        #expect(lastLine(result.stdout).hasPrefix("2 albums: 1 cached, 0 pending, 1 failed; done in "), "\(result.stdout)")
    }

    @Test("Given a daemon running on the cache, when coverd sync runs, then it refuses at once naming the daemon's pid, exits 1, and changes nothing")
    func refusedWhileADaemonHoldsTheCache() throws {
        let world = try World()
        try world.recordAlbums(3, seed: 70)
        let daemon = try world.startDaemon()
        try daemon.waitForStatus("three cached") { $0.cached == 3 }
        let before = try FileManager.default.contentsOfDirectory(atPath: world.cache).sorted()
        try world.server.resetCounts()

        // When
        let result = try sync(world, timeout: 20)

        // Then
        #expect(result.status == 1)
        #expect(result.stderr.contains("cannot sync: another coverd (pid \(daemon.pid)) is already running with this cache"), "\(result.stderr)")
        #expect(result.stdout.isEmpty, "\(result.stdout)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: world.cache).sorted() == before)
        #expect(try world.server.requests().total == 0)
        #expect(daemon.isRunning)
        #expect(try daemon.stop() == 0)
    }

    @Test("Given a broken configuration, when coverd sync runs, then it exits 78 naming file, line and key")
    func badConfiguration() throws {
        let world = try World()
        let file = world.directory.file("coverd.toml")
        try writeAtomically("[fetch]\nconcurrency = \"many\"\n", to: file)

        // When
        let result = try sync(world, ["--config", file], timeout: 20)

        // Then
        #expect(result.status == 78)
        #expect(result.stderr.contains("\(file):2: fetch.concurrency"), "\(result.stderr)")
    }

    @Test("Given bad usage, when coverd sync runs, then it exits 64", arguments: [["--give-up-after", "-1"], ["--concurrency", "0"], ["--log-level", "loud"]])
    func badUsage(arguments: [String]) throws {
        let world = try World()
        let result = try sync(world, arguments, timeout: 20)
        #expect(result.status == 64, "\(arguments): \(result.stderr)")
    }

    @Test("Given an empty records directory, when coverd sync runs, then it exits 0 promptly saying there is nothing")
    func emptyRecords() throws {
        let world = try World()
        let began = Date()

        // When
        let result = try sync(world, timeout: 20)

        // Then
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(Date().timeIntervalSince(began) < 5)
        #expect(lastLine(result.stdout).hasPrefix("0 albums: 0 cached, 0 pending, 0 failed; done in "), "\(result.stdout)")
    }

    @Test("Given a terminal, when coverd sync runs, then it redraws a progress bar in place and ends with a newline and the summary line")
    func progressBarOnATerminal() throws {
        let world = try World()
        var albums: [String] = []
        for index in 0..<16 {
            try world.cover("c\(index).png", seed: 80 + index)
            albums.append(world.album("Album \(index)", world.server.url("c\(index).png?delay_ms=150")))
        }
        try world.record("a.json", "[" + albums.joined(separator: ",") + "]")

        // When
        let result = try runCoverdOnTerminal(
            ["sync", "--records", world.records, "--cache", world.cache, "--concurrency", "2"], columns: 100, timeout: 60)

        // Then
        #expect(result.status == 0, "\(result.stdout)")
        let output = result.stdout
        let redraws = output.components(separatedBy: "\r[").count - 1
        #expect(redraws >= 3, "the bar is drawn again as covers land: \(output.debugDescription)")
        #expect(output.contains("#") && output.contains("/16 albums") && output.contains("covers/s") && output.contains(" left\u{1B}[K"))
        #expect(output.contains("\r[########################] 16/16 albums "), "a full bar at the end: \(output.debugDescription)")
        // The terminal shows each newline as "\r\n": the bar's line ends, then the summary line.
        let lines = output.components(separatedBy: "\r\n")
        #expect(lines.last == "", "ends with a newline: \(output.debugDescription)")
        #expect(lines.dropLast().last?.hasPrefix("16 albums: 16 cached, 0 pending, 0 failed; done in ") == true, "\(output.debugDescription)")
        #expect(lines.dropLast(2).last?.hasSuffix("done\u{1B}[K") == true, "the bar's last state ends its line: \(output.debugDescription)")
        #expect(try status(cache: world.cache).cached == 16)
    }

    @Test("Given a terminal and a cover that is not found, when its error is logged, then the log line goes on a line of its own above the bar, which is drawn again below it")
    func logLinesAboveTheBar() throws {
        let world = try World()
        var albums: [String] = []
        for index in 0..<6 {
            try world.cover("c\(index).png", seed: 90 + index)
            albums.append(world.album("Album \(index)", world.server.url("c\(index).png?delay_ms=200")))
        }
        albums.append(world.album("Gone", world.server.url("gone.png?delay_ms=300")))
        try world.record("a.json", "[" + albums.joined(separator: ",") + "]")

        // When
        let result = try runCoverdOnTerminal(
            ["sync", "--records", world.records, "--cache", world.cache, "--concurrency", "2"], columns: 100, timeout: 60)

        // Then
        #expect(result.status == 1, "\(result.stdout)")
        let output = result.stdout
        let logged = try #require(output.range(of: " error cover for album "), "\(output.debugDescription)")
        let lineStart = try #require(output[..<logged.lowerBound].range(of: "\r\u{1B}[K", options: .backwards))
        #expect(!output[lineStart.upperBound..<logged.lowerBound].contains("["), "the bar was cleared first: \(output.debugDescription)")
        let after = output[logged.upperBound...]
        let lineEnd = try #require(after.range(of: "\r\n"))
        #expect(after[lineEnd.upperBound...].hasPrefix("\r["), "the bar is drawn again below: \(output.debugDescription)")
    }

    @Test("Given a sync in progress, when SIGINT arrives, then it stops cleanly: exit 130, no temporary file, and a summary line saying so")
    func interruptedSync() throws {
        let world = try World()
        var albums: [String] = []
        for index in 0..<30 {
            try world.cover("c\(index).png", seed: 100 + index)
            albums.append(world.album("Album \(index)", world.server.url("c\(index).png?delay_ms=200")))
        }
        try world.record("a.json", "[" + albums.joined(separator: ",") + "]")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: coverdBinary)
        process.arguments = ["sync", "--records", world.records, "--cache", world.cache, "--concurrency", "2"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        try waitUntil("some covers cached", timeout: 30) { ((try? status(cache: world.cache))?.cached ?? 0) >= 2 }

        // When
        kill(process.processIdentifier, SIGINT)

        // Then
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        try waitUntil("coverd sync to exit", timeout: 15) { !process.isRunning }
        #expect(process.terminationStatus == 130, "\(text)")
        #expect(world.strayFiles().isEmpty)
        #expect(lastLine(text).contains("; interrupted by SIGINT after "), "\(text)")
        for entry in try status(cache: world.cache).entries where entry.state == "cached" {
            #expect(FileManager.default.fileExists(atPath: world.coverPath(entry.id)))
        }
    }

    @Test("Given covers cached by an earlier sync and now outdated, when sync runs again, then it revalidates them before it ends, and they are current")
    func syncRevalidatesOutdatedCovers() throws {
        let world = try World()
        for index in 0..<3 { try world.cover("c\(index).png", seed: 90 + index) }
        try world.record("list.json", "[" + (0..<3).map { world.album("C\($0)", world.server.url("c\($0).png")) }.joined(separator: ",") + "]")
        let config = try world.maxAgeConfig(1)
        #expect(try sync(world, ["--config", config]).status == 0)
        // As status reads them with the same max_age.
        func snapshot() throws -> StatusSnapshot {
            try StatusSnapshot(json: try runCoverd(["status", "--json", "--cache", world.cache, "--config", config]).stdout)
        }
        try waitUntil("the covers outdated", timeout: 30) { try snapshot().outdated == 3 }
        let checked = Dictionary(uniqueKeysWithValues: try snapshot().entries.map { ($0.id, $0.checkedAt ?? "") })

        // When
        let result = try sync(world, ["--config", config])

        // Then
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(try world.server.requests().notModified.values.reduce(0, +) >= 3)
        let after = try snapshot()
        #expect(after.cached == 3, "\(after.entries)")
        #expect(after.entries.allSatisfy { ($0.checkedAt ?? "") > checked[$0.id, default: "~"] }, "every one confirmed by this sync")
    }

    @Test("Given outdated covers on a slow server and a max_age shorter than the pass, when sync runs, then it revalidates each once and ends, not chasing covers due again")
    func syncEndsWhenMaxAgeIsShorterThanThePass() throws {
        let world = try World()
        for index in 0..<8 { try world.cover("s\(index).png", seed: 110 + index) }
        // Each answer takes 0.7 s: two rounds of four revalidations outlast max_age.
        try world.record("slow.json", "[" + (0..<8).map { world.album("S\($0)", world.server.url("s\($0).png?delay_ms=700")) }.joined(separator: ",") + "]")
        let config = try world.maxAgeConfig(1)
        #expect(try sync(world, ["--config", config]).status == 0)
        func snapshot() throws -> StatusSnapshot {
            try StatusSnapshot(json: try runCoverd(["status", "--json", "--cache", world.cache, "--config", config]).stdout)
        }
        try waitUntil("the covers outdated", timeout: 30) { try snapshot().outdated == 8 }
        try world.server.resetCounts()

        // When
        let result = try sync(world, ["--config", config], timeout: 60)

        // Then
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let asked = try world.server.requests().conditional.values.reduce(0, +)
        #expect(asked >= 8 && asked < 16, "each once, give or take one that came due again in flight: \(asked)")
    }
}
