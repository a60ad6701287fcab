import CoverdTestSupport
import Foundation
import Testing

extension LookupWorld {
    /// Files in the cache that are not whole covers: temporaries left behind.
    func strayFiles() -> [String] {
        let covers = ((try? FileManager.default.contentsOfDirectory(atPath: cache + "/covers")) ?? []).filter { !$0.hasSuffix(".png") || $0.hasPrefix(".") }
        let incoming = (try? FileManager.default.contentsOfDirectory(atPath: cache + "/incoming")) ?? []
        return covers.map { "covers/" + $0 } + incoming.map { "incoming/" + $0 }
    }
}

@Suite("End to end: lookups that fail, wait or are stopped")
struct LookupFailuresEndToEndTests {
    @Test("Given a hostile answer from MusicBrainz or the archive, when looked up, then the album fails with a reason that names what was wrong", arguments: [
        ("mb:html", "not JSON"),
        ("mb:huge", "larger than the 4194304-byte limit"),
        ("mb:huge-nolength", "larger than the 4194304-byte limit"),
        ("mb:deep", "nesting deeper than"),
        ("mb:wrong-types", "passed over"),
        ("mb:wrong-container", "not an array"),
        ("mb:truncated", "not JSON"),
        ("mb:bad-id", "is not a MusicBrainz id"),
        ("mb:redirect-file", "only http and https"),
        ("caa:redirect-file", "only http and https"),
        ("caa:redirect-ftp", "only http and https"),
        ("caa:html", "not an image"),
    ])
    func hostileAnswers(mode: String, reason: String) throws {
        let parts = mode.split(separator: ":").map(String.init)
        let release = mbid(13, 1), group = mbid(13, 2)
        var fixtures: [String: Any] = [
            "releases": [["id": release, "title": "Hostile", "artist_credit": "Evil", "release_group": group]],
            "release_groups": [["id": group, "title": "Hostile"]],
        ]
        if parts[0] == "mb" {
            fixtures["hostile_searches"] = [["match": "Evil", "mode": parts[1], "entity": "release-group"]]
        } else {
            fixtures["releases"] = [["id": release, "title": "Hostile", "artist_credit": "Evil", "release_group": group, "hostile": ["caa": parts[1]]]]
        }
        let world = try LookupWorld(fixtures)
        // The search for the first mode; the release id (straight to the archive) for the second.
        var album: [String: Any] = ["title": "Hostile", "artist": "Evil", "id": "hostile"]
        if parts[0] == "caa" { album["mbid"] = release }
        try world.record("a.json", [album])

        // When
        let daemon = try world.startDaemon()
        let snapshot = try daemon.waitForStatus("the album failed", timeout: 60) { $0.album("hostile")?.state == "failed" }

        // Then
        let error = try #require(snapshot.album("hostile")?.error)
        #expect(error.contains(reason), "\(error)")
        #expect(snapshot.album("hostile")?.source == nil)
        #expect(try daemon.stop() == 0)
    }

    @Test("Given a hostile answer to the release lookup, when the release has no front image, then the album fails saying what MusicBrainz sent", arguments: [
        ("wrong-types", "not an object"),
        ("bad-id", "is not a MusicBrainz id"),
        ("html", "not JSON"),
    ])
    func hostileReleaseLookup(mode: String, reason: String) throws {
        let release = mbid(14, 1)
        let world = try LookupWorld(["releases": [["id": release, "title": "Hostile", "artist_credit": "Evil", "caa": false, "hostile": ["mb": mode]]]])
        try world.record("a.json", [["title": "Hostile", "artist": "Evil", "mbid": release, "id": "hostile"]])

        // When
        let daemon = try world.startDaemon()
        let snapshot = try daemon.waitForStatus("the album failed", timeout: 60) { $0.album("hostile")?.state == "failed" }

        // Then
        let error = try #require(snapshot.album("hostile")?.error)
        #expect(error.contains("release \(release)") && error.contains(reason), "\(error)")
        #expect(try daemon.stop() == 0)
    }

    @Test("Given MusicBrainz answering one search 503 with Retry-After: 3, when albums wait to be searched, then none of them asks MusicBrainz for 3 s, and every cover is found after")
    func a503PausesEveryLookup() throws {
        var releases: [[String: Any]] = []
        var albums: [[String: Any]] = []
        for index in 1...4 {
            releases.append(["id": mbid(18, index), "title": "Patient \(index)", "artist_credit": "Band \(index)"])
            albums.append(["title": "Patient \(index)", "artist": "Band \(index)", "id": "p\(index)"])
        }
        let world = try LookupWorld([
            "options": ["retry_after": 3],
            "releases": releases,
            "hostile_searches": [["match": "Patient", "mode": "status:503", "entity": "release-group", "times": 1]],
        ])
        try world.record("a.json", albums)

        // When
        let daemon = try world.startDaemon()
        try daemon.waitForStatus("every cover cached", timeout: 90) { $0.cached == 4 }

        // Then
        let seen = try world.services.requests()
        let refused = try #require(seen.hostileTimes.first)
        #expect(seen.hostileTimes.count == 1)
        let during = seen.acceptedTimes.filter { $0 > refused && $0 < refused + 3 }
        #expect(during.isEmpty, "MusicBrainz asked \(during.map { $0 - refused }) s after the 503")
        #expect(seen.overRate == 0)
        #expect(try daemon.stop() == 0)
    }

    @Test("Given MusicBrainz that reads a request and never answers, when searched, then the lookup times out and the album waits for a retry saying so")
    func silentMusicBrainz() throws {
        let world = try LookupWorld(
            ["hostile_searches": [["match": "Quiet", "mode": "silent", "entity": "release-group"]]], settings: "[fetch]\ntimeout = 2\n")
        try world.record("a.json", [["title": "Quiet", "artist": "Nobody", "id": "quiet"]])

        // When
        let daemon = try world.startDaemon()
        let snapshot = try daemon.waitForStatus("the lookup's failure recorded", timeout: 60) { $0.album("quiet")?.error != nil }

        // Then
        let entry = try #require(snapshot.album("quiet"))
        #expect(entry.state == "pending", "a timeout is transient")
        #expect(entry.error?.contains("MusicBrainz") == true && entry.error?.lowercased().contains("timed out") == true, "\(entry.error ?? "")")
        #expect(try daemon.stop() == 0)
    }

    @Test("Given albums waiting for MusicBrainz, when status and systemd are told, then both say how many wait for a lookup")
    func waitingForALookupIsShown() throws {
        let world = try LookupWorld(["hostile_searches": [["match": "Quiet", "mode": "silent", "entity": "release-group"]]])
        try world.record("a.json", [
            ["title": "Quiet", "artist": "Nobody", "id": "quiet1"],
            ["title": "Quiet Two", "artist": "Nobody", "id": "quiet2"],
        ])
        let socket = try NotifySocket(directory: world.directory.path)

        // When
        let daemon = try CoverdDaemon(
            records: world.records, cache: world.cache, arguments: ["--config", world.config], environment: ["NOTIFY_SOCKET": socket.address])
        try daemon.waitUntilReady()

        // Then
        try waitUntil("STATUS= to name the lookups") {
            socket.values("STATUS").last == "2 albums: 0 cached, 2 pending, 0 failed; 2 waiting for a lookup"
        }
        let table = try runCoverd(["status", "--cache", world.cache])
        #expect(table.stdout.hasPrefix("2 albums: 0 cached, 2 pending, 0 failed; 2 waiting for a lookup\n"), "\(table.stdout)")
        #expect(try daemon.stop() == 0)
    }

    @Test("Given many albums queued for MusicBrainz's one request a second, when SIGTERM arrives, then coverd exits 0 at once, leaving nothing behind")
    func stopWhileSearchesWait() throws {
        var releases: [[String: Any]] = []
        var albums: [[String: Any]] = []
        for index in 1...40 {
            releases.append(["id": mbid(15, index), "title": "Queued \(index)", "artist_credit": "Band \(index)"])
            albums.append(["title": "Queued \(index)", "artist": "Band \(index)", "id": "q\(index)"])
        }
        let world = try LookupWorld(["releases": releases])
        try world.record("a.json", albums)
        let daemon = try world.startDaemon()
        try daemon.waitForStatus("a first cover found", timeout: 60) { $0.cached >= 1 }

        // When: most searches still wait their turn, seconds away.
        #expect(try daemon.status().pending > 20)
        let exit = try daemon.stop(timeout: 10)

        // Then
        #expect(exit == 0)
        #expect(world.strayFiles().isEmpty)
        #expect(daemon.log.contains("event=stopping"))
    }

    @Test("Given an album nothing was found for, when MusicBrainz learns of it and the daemon reloads, then it is looked up again and cached")
    func reloadLooksUpAgain() throws {
        let world = try LookupWorld(["releases": []])
        try world.record("a.json", [["title": "Late", "artist": "Newcomer", "id": "late"]])
        let daemon = try world.startDaemon()
        try daemon.waitForStatus("nothing found") { $0.album("late")?.error?.hasPrefix("no cover found") == true }

        // When
        let fixtures = try JSONSerialization.data(withJSONObject: ["releases": [["id": mbid(16, 1), "title": "Late", "artist_credit": "Newcomer"]]])
        let posted = try runTool(["curl", "-sS", "--max-time", "10", "-X", "POST", "--data-binary", String(decoding: fixtures, as: UTF8.self),
                                  "\(world.services.musicBrainzURL)/__fixtures"])
        #expect(posted.status == 0, "\(posted.stderr)")
        daemon.send(SIGHUP)

        // Then
        let snapshot = try daemon.waitForStatus("the album cached", timeout: 60) { $0.album("late")?.state == "cached" }
        #expect(snapshot.album("late")?.source == "search")
        #expect(snapshot.album("late")?.error == nil)
        #expect(try daemon.stop() == 0)
    }
}
