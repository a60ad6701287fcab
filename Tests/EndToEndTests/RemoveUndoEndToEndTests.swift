import CoverdTestSupport
import Foundation
import Testing

extension World {
    /// The JSON values of a record file: what `remove` must keep of the albums it leaves.
    func jsonValue(_ name: String) throws -> NSArray {
        let data = try Data(contentsOf: URL(fileURLWithPath: records + "/" + name))
        return try #require(try JSONSerialization.jsonObject(with: data) as? NSArray)
    }

    func keptPath(_ id: String) -> String { cache + "/removed/" + id + ".png" }

    /// A configuration file with `[cache] keep_removed` set to `seconds`.
    func keepRemovedConfig(_ seconds: Int) throws -> String {
        let path = directory.path + "/keep.toml"
        try writeAtomically("[cache]\nkeep_removed = \(seconds)\n", to: path)
        return path
    }
}

@Suite("End to end: remove, undo and covers kept for removed albums")
struct RemoveUndoEndToEndTests {
    @Test("Given a list of three albums, when the middle one is removed, then the file keeps the other two as they were, and undo puts it back byte for byte")
    func removeFromAListThenUndo() throws {
        let world = try World()
        let text = """
            [
              {"title": "One", "artist": "A", "cover_url": "http://h/1.png", "id": "one", "year": 1999},
              {"title": "Two", "artist": "B", "cover_url": "http://h/2.png", "id": "two", "genre": "Pop"},
              {"title": "Three \\u00e9", "artist": "C", "cover_url": "http://h/3.png", "id": "three"}
            ]

            """
        try world.record("list.json", text)
        let before = try world.jsonValue("list.json")

        // When
        let removed = try runCoverd(["remove", "two", "--records", world.records, "--cache", world.cache])

        // Then
        #expect(removed.status == 0, "\(removed.stderr)")
        let after = try world.jsonValue("list.json")
        #expect(after.count == 2)
        #expect(after[0] as? NSDictionary == before[0] as? NSDictionary)
        #expect(after[1] as? NSDictionary == before[2] as? NSDictionary)
        let undone = try runCoverd(["undo", "--records", world.records, "--cache", world.cache])
        #expect(undone.status == 0, "\(undone.stderr)")
        #expect(readBytes(world.records + "/list.json") == Array(text.utf8))
    }

    @Test("Given a file holding only the album, when removed, then the file is gone, and undo brings it back byte for byte")
    func removeASingleAlbumFile() throws {
        let world = try World()
        let text = #"{"title": "Solo", "artist": "A", "cover_url": "http://h/s.png", "id": "solo"}"#
        try world.record("solo.json", text)

        // When
        let removed = try runCoverd(["remove", "solo", "--records", world.records, "--cache", world.cache])

        // Then
        #expect(removed.status == 0, "\(removed.stderr)")
        #expect(!FileManager.default.fileExists(atPath: world.records + "/solo.json"))
        #expect(try runCoverd(["undo", "--cache", world.cache]).status == 0)
        #expect(readBytes(world.records + "/solo.json") == Array(text.utf8))
    }

    @Test("Given an album from albums.bin, when removed, then coverd refuses with exit 1 saying why, and the archive is untouched")
    func removeFromAnArchiveIsRefused() throws {
        let world = try World()
        let archive = try ArchiveFixture.archive([.init(title: "Archived", artist: "Artist", coverURL: "http://h/a.png")])
        try writeAtomically([UInt8](archive), to: world.records + "/albums.bin")
        let daemon = try world.startDaemon()
        let id = try #require(try daemon.waitForStatus("the album indexed") { $0.albums == 1 }.entries.first?.id)
        #expect(try daemon.stop() == 0)

        // When
        let result = try runCoverd(["remove", id, "--records", world.records, "--cache", world.cache])

        // Then
        #expect(result.status == 1)
        #expect(result.stderr.contains("binary archive"), "\(result.stderr)")
        #expect(readBytes(world.records + "/albums.bin") == [UInt8](archive))
    }

    @Test("Given two albums removed from a running daemon's records, when undone twice across a restart, then both files and both covers come back with no request to the server")
    func twoUndosAcrossARestart() throws {
        let world = try World()
        try world.recordAlbums(3, seed: 40)
        try world.cover("solo.png", seed: 50)
        try world.record("solo.json", world.album("Solo", world.server.url("solo.png"), extra: #", "id": "solo""#))
        let originalList = try #require(readBytes(world.records + "/a.json"))
        let originalSolo = try #require(readBytes(world.records + "/solo.json"))
        let daemon = try world.startDaemon()
        let synced = try daemon.waitForStatus("four cached") { $0.cached == 4 }
        let listed = try #require(synced.entries.first { $0.title == "Album 1" }?.id)
        let soloCover = try #require(readBytes(world.coverPath("solo")))
        let listedCover = try #require(readBytes(world.coverPath(listed)))

        // When
        #expect(try runCoverd(["remove", listed, "--records", world.records, "--cache", world.cache]).status == 0)
        #expect(try runCoverd(["remove", "solo", "--records", world.records, "--cache", world.cache]).status == 0)
        try daemon.waitForStatus("both removed") { $0.albums == 2 }
        #expect(readBytes(world.keptPath("solo")) == soloCover && readBytes(world.coverPath("solo")) == nil)
        #expect(try daemon.stop() == 0)
        let requests = try world.server.requests().total
        let restarted = try world.startDaemon()
        try restarted.waitUntilReady()
        #expect(try runCoverd(["undo", "--cache", world.cache]).status == 0)
        #expect(try runCoverd(["undo", "--cache", world.cache]).status == 0)

        // Then
        try restarted.waitForStatus("four cached again") { $0.cached == 4 && $0.albums == 4 }
        #expect(readBytes(world.records + "/a.json") == originalList)
        #expect(readBytes(world.records + "/solo.json") == originalSolo)
        #expect(readBytes(world.coverPath("solo")) == soloCover)
        #expect(readBytes(world.coverPath(listed)) == listedCover)
        #expect(try world.server.requests().total == requests, "no cover downloaded again")
        #expect(try restarted.stop() == 0)
    }

    @Test("Given a cached album whose record file is deleted by hand and written back, when synced, then its cover comes back with no request")
    func deletedAndWrittenBackCostsNothing() throws {
        let world = try World()
        try world.cover("c.png", seed: 60)
        let text = world.album("Back", world.server.url("c.png"), extra: #", "id": "back""#)
        try world.record("back.json", text)
        let daemon = try world.startDaemon()
        try daemon.waitForStatus("cached") { $0.cached == 1 }
        let requests = try world.server.requests().total

        // When
        #expect(unlink(world.records + "/back.json") == 0)
        try daemon.waitForStatus("removed") { $0.albums == 0 }
        try world.record("back.json", text)

        // Then
        try daemon.waitForStatus("cached again") { $0.cached == 1 }
        #expect(try world.server.requests().total == requests)
        #expect(daemon.log.contains("came back"), "the log says the cover came back")
        #expect(try daemon.stop() == 0)
    }

    @Test(
        "Given covers/ on another filesystem than the cache, when a cached album is removed and undone, then its cover is kept beside the covers and comes back with no request",
        .enabled(if: tmpfsIsAnotherFilesystem()))
    func keptAcrossFilesystems() throws {
        let world = try World()
        let elsewhere = TestDirectory(base: "/dev/shm", "coverd-covers")
        try FileManager.default.createDirectory(atPath: world.cache, withIntermediateDirectories: true)
        #expect(symlink(elsewhere.path, world.cache + "/covers") == 0)
        try world.cover("c.png", seed: 72)
        let text = world.album("Away", world.server.url("c.png"), extra: #", "id": "away""#)
        try world.record("away.json", text)
        let daemon = try world.startDaemon()
        try daemon.waitForStatus("cached") { $0.cached == 1 }
        let cover = try #require(readBytes(world.coverPath("away")))
        let requests = try world.server.requests().total

        // When
        #expect(try runCoverd(["remove", "away", "--records", world.records, "--cache", world.cache]).status == 0)
        try daemon.waitForStatus("removed") { $0.albums == 0 }
        let kept = elsewhere.path + "/.removed/away.png"
        try waitUntil("the cover kept beside the covers") { readBytes(kept) == cover }
        let listed = try runCoverd(["status", "--removed", "--json", "--cache", world.cache])
        #expect(try runCoverd(["verify", "--cache", world.cache]).status == 0)
        #expect(try runCoverd(["undo", "--cache", world.cache]).status == 0)

        // Then
        #expect(listed.stdout.contains(world.cache + "/covers/.removed/away.png"), "\(listed.stdout)")
        try daemon.waitForStatus("cached again") { $0.cached == 1 }
        #expect(readBytes(world.coverPath("away")) == cover)
        #expect(try world.server.requests().total == requests, "no download")
        #expect(try daemon.stop() == 0)
    }

    @Test("Given a file changed after remove, when undo runs, then it refuses with exit 1 naming the file, and leaves it untouched")
    func undoRefusesAChangedFile() throws {
        let world = try World()
        try world.record("list.json", #"[{"title": "A", "artist": "X", "cover_url": "http://h/a.png", "id": "a"}, {"title": "B", "artist": "Y", "cover_url": "http://h/b.png", "id": "b"}]"#)
        #expect(try runCoverd(["remove", "a", "--records", world.records, "--cache", world.cache]).status == 0)
        let edited = #"[{"title": "B", "artist": "Y", "cover_url": "http://h/b2.png", "id": "b"}]"#
        try world.record("list.json", edited)

        // When
        let result = try runCoverd(["undo", "--cache", world.cache])

        // Then
        #expect(result.status == 1)
        #expect(result.stderr.contains(world.records + "/list.json") && result.stderr.contains("changed"), "\(result.stderr)")
        #expect(readBytes(world.records + "/list.json") == Array(edited.utf8))
        #expect(result.stderr.contains("coverd undo --skip"), "the refusal says how to go past it")

        // When the stuck removal is set aside
        let skipped = try runCoverd(["undo", "--skip", "--cache", world.cache])

        // Then
        #expect(skipped.status == 0 && skipped.stdout.contains("set aside"), "\(skipped.stdout)\(skipped.stderr)")
        #expect(readBytes(world.records + "/list.json") == Array(edited.utf8))
        #expect(try runCoverd(["undo", "--cache", world.cache]).stderr.contains("nothing to undo"))
    }

    @Test("Given keep_removed of a few seconds, when a cached album is removed, then its kept cover is deleted once that time is up")
    func shortKeepRemovedPurges() throws {
        let world = try World()
        try world.cover("c.png", seed: 70)
        try world.record("gone.json", world.album("Gone", world.server.url("c.png"), extra: #", "id": "gone""#))
        let daemon = try world.startDaemon(["--config", try world.keepRemovedConfig(3)])
        try daemon.waitForStatus("cached") { $0.cached == 1 }

        // When
        #expect(try runCoverd(["remove", "gone", "--records", world.records, "--cache", world.cache]).status == 0)

        // Then
        try waitUntil("the log to say the cover is kept") { daemon.log.contains("kept until") }
        try waitUntil("the kept cover deleted", timeout: 30) { !FileManager.default.fileExists(atPath: world.keptPath("gone")) }
        try waitUntil("its row gone") {
            try runCoverd(["status", "--removed", "--json", "--cache", world.cache]).stdout.contains("\"id\": \"gone\"") == false
        }
        #expect(try daemon.status().albums == 0)
        #expect(try daemon.stop() == 0)
    }

    @Test("Given a removed album's kept cover, when status runs, then only --removed lists it; when the file is corrupted, verify reports and drops it, and verifies clean after")
    func keptCoversAreListedAndVerified() throws {
        let world = try World()
        try world.cover("c.png", seed: 71)
        try world.record("gone.json", world.album("Gone", world.server.url("c.png"), extra: #", "id": "gone""#))
        let daemon = try world.startDaemon()
        try daemon.waitForStatus("cached") { $0.cached == 1 }
        #expect(try runCoverd(["remove", "gone", "--records", world.records, "--cache", world.cache]).status == 0)
        try waitUntil("the cover kept") { readBytes(world.keptPath("gone")) != nil }
        try daemon.waitForStatus("the album gone") { $0.albums == 0 }
        #expect(try daemon.stop() == 0)

        // When
        let plain = try runCoverd(["status", "--json", "--cache", world.cache])
        let removed = try runCoverd(["status", "--removed", "--json", "--cache", world.cache])

        // Then
        #expect(!plain.stdout.contains("\"gone\""), "\(plain.stdout)")
        #expect(removed.stdout.contains("\"id\": \"gone\"") && removed.stdout.contains("\"kept_until\""), "\(removed.stdout)")
        #expect(try runCoverd(["verify", "--cache", world.cache]).status == 0, "a good kept cover verifies")

        // When the kept file is damaged
        var bytes = try #require(readBytes(world.keptPath("gone")))
        bytes[bytes.count / 2] ^= 0xFF
        try writeAtomically(bytes, to: world.keptPath("gone"))
        let bad = try runCoverd(["verify", "--cache", world.cache])
        let again = try runCoverd(["verify", "--cache", world.cache])

        // Then
        #expect(bad.status == 1)
        #expect(bad.stdout.contains(world.keptPath("gone")) && bad.stdout.contains("dropped"), "\(bad.stdout)")
        #expect(again.status == 0, "\(again.stdout)")
        #expect(!FileManager.default.fileExists(atPath: world.keptPath("gone")))
        #expect(!(try runCoverd(["status", "--removed", "--json", "--cache", world.cache]).stdout.contains("\"gone\"")))
    }

    @Test("Given coverd remove killed between writing its undo entry and changing the record, when undo runs, then nothing is lost")
    func killedBetweenJournalAndRecord() throws {
        let world = try World()
        let text = #"[{"title": "A", "artist": "X", "cover_url": "http://h/a.png", "id": "a"}, {"title": "B", "artist": "Y", "cover_url": "http://h/b.png", "id": "b"}]"#
        try world.record("list.json", text)
        // strace holds the second rename (the record's) for a minute: the undo entry's is the first.
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/strace")
        process.arguments = ["-f", "-qq", "-o", "/dev/null", "-e", "trace=rename,renameat,renameat2", "-e", "inject=rename,renameat,renameat2:delay_enter=60000000:when=2",
                             coverdBinary, "remove", "a", "--records", world.records, "--cache", world.cache]
        try process.run()
        // Held at the record's rename: its entry is written, and its new bytes wait in a temporary file.
        try waitUntil("the undo entry and the new record written", timeout: 30) {
            ((try? FileManager.default.contentsOfDirectory(atPath: world.cache + "/undo")) ?? []).contains { $0.hasSuffix(".undo") }
                && ((try? FileManager.default.contentsOfDirectory(atPath: world.records)) ?? []).contains { $0.hasPrefix(".list.json.") }
        }

        // When: coverd itself is killed (strace's child; killing strace would let it run on)
        let child = try waitFor("coverd under strace") { () -> Int32? in
            let children = (try? String(contentsOfFile: "/proc/\(process.processIdentifier)/task/\(process.processIdentifier)/children", encoding: .utf8)) ?? ""
            return children.split(separator: " ").first.flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }
        kill(child, SIGKILL)
        // Then strace, which would sit out its injected delay first: detached, coverd dies of the
        // SIGKILL already pending, before it runs another instruction.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        // Gone once it cannot be signalled or is a zombie no one has reaped yet: it runs nothing either way.
        try waitUntil("coverd gone") {
            kill(child, 0) != 0 || ((try? String(contentsOfFile: "/proc/\(child)/stat", encoding: .utf8))?.split(separator: ")").last?.hasPrefix(" Z") ?? true)
        }
        #expect(readBytes(world.records + "/list.json") == Array(text.utf8), "the record was not changed before the kill")
        let temporaries = try FileManager.default.contentsOfDirectory(atPath: world.records).filter { $0.hasPrefix(".list.json.") }
        #expect(temporaries.count == 1, "the new record was written and flushed, and killed before its rename: \(temporaries)")
        let result = try runCoverd(["undo", "--cache", world.cache])

        // Then
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("already as it was before"), "\(result.stdout)")
        #expect(readBytes(world.records + "/list.json") == Array(text.utf8))
        #expect(try runCoverd(["undo", "--cache", world.cache]).status == 1, "the journal is empty again")
    }
}

/// Whether /dev/shm is another filesystem than the temporary directory the tests' caches are in.
func tmpfsIsAnotherFilesystem() -> Bool {
    var shm = stat(), temporary = stat()
    return stat("/dev/shm", &shm) == 0 && stat(NSTemporaryDirectory(), &temporary) == 0 && shm.st_dev != temporary.st_dev
        && access("/dev/shm", W_OK) == 0
}
