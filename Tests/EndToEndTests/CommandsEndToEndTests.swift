import CLinux
import CoverdBase
import CoverdCache
import CoverdModel
import CoverdRecords
import CoverdTestSupport
import Foundation
import Testing

@Suite("End to end: commands", .serialized)
struct CommandsEndToEndTests {
    @Test("Given coverd add, when run, then it prints the id, writes one record atomically, and the daemon fetches it")
    func addWritesRecord() throws {
        let world = try World()
        let png = try world.cover("added.png", seed: 3)
        let daemon = try world.startDaemon()
        try daemon.waitUntilReady()
        let result = try runCoverd([
            "add", "--title", "Added", "--artist", "Someone", "--cover-url", world.server.url("added.png"),
            "--year", "2001", "--genre", "Jazz", "--records", world.records,
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let id = result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(id == AlbumID.derived(artist: "Someone", title: "Added").rawValue)
        #expect(try FileManager.default.contentsOfDirectory(atPath: world.records) == ["\(id).json"])
        let snapshot = try daemon.waitForStatus("the added album cached") { $0.cached == 1 }
        #expect(snapshot.entries.first?.id == id)
        #expect(readBytes(world.coverPath(id)) == png)
        #expect(try daemon.stop() == 0)
    }

    @Test("Given coverd add with an explicit id, when run, then that id is printed and kept in the record")
    func addWithID() throws {
        let directory = TestDirectory()
        let result = try runCoverd(["add", "--title", "T", "--artist", "A", "--cover-url", "https://e.com/c.png", "--id", "my-album", "--records", directory.path])
        #expect(result.stdout == "my-album\n")
        let contents = try JSONRecordDecoder().decode(readBytes(directory.file("my-album.json")) ?? [], record: "x")
        #expect(contents.albums.first?.id.rawValue == "my-album")
        #expect(result.stderr.contains("wrote \(directory.file("my-album.json"))"), "\(result.stderr)")
        let again = try runCoverd(["add", "--title", "T2", "--artist", "A", "--cover-url", "https://e.com/c.png", "--id", "my-album", "--records", directory.path])
        #expect(again.status == 0)
        #expect(again.stderr.contains("replaced \(directory.file("my-album.json")) (a record of this album was already there)"), "\(again.stderr)")
        #expect(try JSONRecordDecoder().decode(readBytes(directory.file("my-album.json")) ?? [], record: "x").albums.first?.title == "T2")
    }

    @Test("Given coverd add without a cover URL but with MusicBrainz ids, when run, then the record holds the ids and no URL, to be looked up")
    func addWithoutURL() throws {
        let directory = TestDirectory()
        let release = "0d1e0a53-4a8c-4c55-9e6d-5b6b54c4e6e4", group = "1b022e01-4da6-387b-8658-8678046e4cef"

        // When
        let result = try runCoverd([
            "add", "--title", "T", "--artist", "A", "--mbid", release, "--release-group-mbid", group, "--id", "looked-up", "--records", directory.path,
        ])

        // Then
        #expect(result.status == 0, "\(result.stderr)")
        let album = try #require(try JSONRecordDecoder().decode(readBytes(directory.file("looked-up.json")) ?? [], record: "x").albums.first)
        #expect(album.coverURL == nil)
        #expect(album.releaseID?.rawValue == release && album.releaseGroupID?.rawValue == group)
    }

    @Test("Given lookups turned off, when coverd add has no cover URL, then it exits 64 saying to give one, and writes nothing")
    func addWithoutURLWhenLookupsAreOff() throws {
        let directory = TestDirectory()
        let config = directory.file("coverd.toml")
        try writeAtomically("[sources]\nlookup = false\n", to: config)

        // When
        let result = try runCoverd(["add", "--title", "T", "--artist", "A", "--config", config, "--records", directory.sub("albums")])

        // Then
        #expect(result.status == 64)
        #expect(result.stderr.contains("--cover-url"), "\(result.stderr)")
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: directory.sub("albums"))) ?? []).isEmpty)
    }

    @Test("Given bad usage, when run, then coverd exits 64", arguments: [
        ["add", "--title", "T", "--artist", "A", "--cover-url", "ftp://e.com/c.png"],
        ["add", "--title", "T", "--artist", "A", "--cover-url", "https://e.com/c.png", "--id", "../x"],
        ["add", "--title", "T", "--artist", "A", "--mbid", "not-a-uuid"],
        ["add", "--title", "T"],
        ["run", "--concurrency", "0"],
        ["run", "--log-level", "loud"],
        ["run", "--per-host", "1025"],
        ["run", "--log-target", "syslog"],
        ["frobnicate"],
        ["status", "--no-such-flag"],
        [],
    ])
    func badUsage(arguments: [String]) throws {
        let directory = TestDirectory()
        let result = try runCoverd(arguments + (arguments.first == "add" ? ["--records", directory.path] : []))
        #expect(result.status == 64, "\(arguments): \(result.stderr)")
        #expect(!result.stderr.isEmpty)
    }

    @Test("Given a broken configuration, when check-config runs, then it exits 78 naming file, line and key")
    func checkConfigBroken() throws {
        let directory = TestDirectory()
        let file = directory.file("coverd.toml")
        try writeAtomically("log_level = \"info\"\n[fetch]\nper_host = \"six\"\n", to: file)
        let result = try runCoverd(["check-config", "--config", file])
        #expect(result.status == 78)
        #expect(result.stderr.contains("\(file):3: fetch.per_host: must be an integer"))
    }

    @Test("Given a configuration file named but missing, when check-config runs, then it exits 78 naming the file and no line")
    func checkConfigMissingFile() throws {
        let directory = TestDirectory()
        let file = directory.file("absent.toml")
        let result = try runCoverd(["check-config", "--config", file])
        #expect(result.status == 78)
        #expect(result.stderr.contains("\(file): configuration file does not exist"), "\(result.stderr)")
        #expect(!result.stderr.contains(":0:"), "\(result.stderr)")
    }

    @Test("Given a valid configuration, when check-config runs, then it exits 0")
    func checkConfigValid() throws {
        let directory = TestDirectory()
        let file = directory.file("coverd.toml")
        try writeAtomically("[fetch]\nconcurrency = 4\n", to: file)
        let result = try runCoverd(["check-config", "--config", file])
        #expect(result.status == 0)
        #expect(result.stdout.contains("configuration OK: \(file)"))
    }

    @Test("Given a broken configuration, when the daemon starts, then it exits 78 without touching the cache")
    func runWithBrokenConfig() throws {
        let directory = TestDirectory()
        let file = directory.file("coverd.toml")
        try writeAtomically("[fetch]\nconcurency = 4\n", to: file)
        let result = try runCoverd(["run", "--config", file, "--records", directory.sub("albums"), "--cache", directory.file("cache")])
        #expect(result.status == 78)
        #expect(result.stderr.contains("\(file):2: fetch.concurency: unknown setting (did you mean 'fetch.concurrency'?)"))
        #expect(!FileManager.default.fileExists(atPath: directory.file("cache")))
    }

    @Test("Given a configuration with directories, when the daemon runs with flags, then flags win over the file")
    func flagsOverrideFile() throws {
        let world = try World()
        try world.cover("c.png", seed: 1)
        try world.record("a.json", world.album("A", world.server.url("c.png")))
        let file = world.directory.file("coverd.toml")
        try writeAtomically("records = \"elsewhere\"\ncache = \"elsewhere-cache\"\n", to: file)
        let daemon = try CoverdDaemon(records: world.records, cache: world.cache, arguments: ["--config", file])
        try daemon.waitForStatus("cached under the flag's cache") { $0.cached == 1 }
        #expect(!FileManager.default.fileExists(atPath: world.directory.file("elsewhere-cache")))
        #expect(try daemon.stop() == 0)
    }

    @Test("Given --log-target journal where journald has no socket, when the daemon runs, then it logs to stderr and says why",
          .enabled(if: !FileManager.default.fileExists(atPath: "/run/systemd/journal/socket")))
    func journalTargetWithoutJournal() throws {
        let world = try World()
        try world.cover("c.png", seed: 1)
        try world.record("a.json", world.album("A", world.server.url("c.png")))
        let daemon = try world.startDaemon(["--log-target", "journal"])
        try daemon.waitForStatus("cached") { $0.cached == 1 }
        try waitUntil("the cached line on stderr") { daemon.log.contains("event=cover_cached") }
        #expect(daemon.log.contains("log target is the journal, but /run/systemd/journal/socket does not exist: logging to stderr"))
        #expect(try daemon.stop() == 0)
    }

    @Test("Given --version and --help, when run, then each answers and exits 0",
          arguments: [["--version"], ["--help"], ["run", "--help"], ["status", "--help"], ["add", "--help"], ["verify", "--help"], ["check-config", "--help"]])
    func helpAndVersion(arguments: [String]) throws {
        let result = try runCoverd(arguments)
        #expect(result.status == 0)
        if arguments == ["--version"] {
            #expect(result.stdout.hasPrefix("coverd \(CoverdVersion.string)"))
        } else {
            #expect(result.stdout.contains("USAGE: coverd"))
        }
    }

    @Test("Given an index that is not a database beside a corrupt cover, when verified, then the cover is still checked, and verify exits 1 saying it cannot read the index")
    func verifyWithAnUnreadableIndex() throws {
        let directory = TestDirectory()
        try FileManager.default.createDirectory(atPath: directory.path + "/covers", withIntermediateDirectories: true)
        var png = PNGFixture.make(width: 8, height: 8, seed: 1)
        png[png.count - 5] ^= 0xFF  // IEND's CRC
        try Data(png).write(to: URL(fileURLWithPath: directory.path + "/covers/x.png"))
        try Data(repeating: 0x41, count: 8192).write(to: URL(fileURLWithPath: directory.path + "/index.sqlite3"))
        let result = try runCoverd(["verify", "--cache", directory.path])
        #expect(result.status == 1)
        #expect(result.stdout.contains("bad: \(directory.path)/covers/x.png"), "\(result.stdout)")
        #expect(result.stderr.contains("cannot read the index"), "\(result.stderr)")
    }

    @Test("Given no index, when status runs, then it reports zero albums, says on stderr that no index exists there, and exits 0",
          arguments: [false, true])
    func statusWithoutIndex(json: Bool) throws {
        let directory = TestDirectory()
        let result = try runCoverd(["status", "--cache", directory.path] + (json ? ["--json"] : []))
        #expect(result.status == 0)
        if json {
            #expect(result.stdout.hasPrefix("{\"summary\": {\"albums\": 0, \"cached\": 0, \"pending\": 0, \"failed\": 0, \"outdated\": 0}"))
        } else {
            #expect(result.stdout == "0 albums: 0 cached, 0 pending, 0 failed\n")
        }
        #expect(result.stderr.contains("no index at \(directory.path)/index.sqlite3"), "\(result.stderr)")
    }

    @Test("Given a cache directory that does not exist, when verify runs, then it exits 0 and says on stderr there is no cache there")
    func verifyWithoutCache() throws {
        let directory = TestDirectory()
        let missing = directory.file("typo")
        let result = try runCoverd(["verify", "--cache", missing])
        #expect(result.status == 0)
        #expect(result.stderr.contains("no cache at \(missing)"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: missing), "verify creates nothing")
    }

    @Test("Given an index too large for a default pipe, when status --json writes into a pipe, then the pipe was grown to 1 MiB and the JSON arrives whole",
          .enabled(if: (pipeMaxSize ?? 0) >= 1 << 20))
    func statusGrowsItsPipe() throws {
        // Given: 1,000 albums, about 200 KB of JSON
        let directory = TestDirectory()
        let index = try CoverIndex(cacheDirectory: directory.path)
        try index.apply(try (0..<1000).map { number in
            let album = Album(
                id: try AlbumID(validating: "album\(number)"), title: "Title \(number)", artist: "Artist",
                coverURL: try CoverURL(validating: "http://127.0.0.1:9/\(number).png"), record: directory.path + "/r.json")
            return .upsert(IndexRow(album: album, state: .pending, updatedAt: Date()))
        })

        // When
        let process = Process()
        process.executableURL = URL(fileURLWithPath: coverdBinary)
        process.arguments = ["status", "--json", "--cache", directory.path]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()

        // Then: the size belongs to the pipe, so the reading end shows what the command set
        #expect(process.terminationStatus == 0)
        #expect(data.count > 64 * 1024)
        #expect(coverd_pipe_size(out.fileHandleForReading.fileDescriptor) == 1 << 20)
        #expect(try StatusSnapshot(json: String(decoding: data, as: UTF8.self)).entries.count == 1000)
    }
}
