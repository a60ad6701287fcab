import CoverdTestSupport
import Foundation
import Testing

/// A world for lookups: the stand-in for MusicBrainz and the Cover Art
/// Archive (`musicbrainz_server.py`) on its fixtures, a records directory,
/// a cache, and a configuration pointing coverd at the stand-in.
struct LookupWorld {
    let directory = TestDirectory("coverd-lookup")
    let services: MusicBrainzServer
    let records: String
    let cache: String
    let config: String

    init(_ fixtures: [String: Any], settings: String = "") throws {
        services = try MusicBrainzServer(fixtures: fixtures, in: directory)
        records = directory.sub("albums")
        cache = directory.path + "/cache"
        config = directory.path + "/coverd.toml"
        try writeAtomically(settings + "\n" + services.sourcesSection(), to: config)
    }

    func record(_ name: String, _ albums: [[String: Any]]) throws {
        let json = try JSONSerialization.data(withJSONObject: albums.count == 1 ? albums[0] : albums, options: [.sortedKeys])
        try writeAtomically([UInt8](json), to: records + "/" + name)
    }

    func startDaemon() throws -> CoverdDaemon {
        try CoverdDaemon(records: records, cache: cache, arguments: ["--config", config])
    }

    func coverPath(_ id: String) -> String { cache + "/covers/" + id + ".png" }

    /// A cached cover's width and height, from its PNG header.
    func coverSize(_ id: String) -> (width: Int, height: Int)? {
        guard let bytes = readBytes(coverPath(id)), bytes.count >= 24 else { return nil }
        func be32(_ offset: Int) -> Int { bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) } }
        return (be32(16), be32(20))
    }
}

/// Ids for the fixtures: one family per test keeps them apart at a glance.
func mbid(_ family: Int, _ number: Int) -> String {
    String(format: "%08x-0000-4000-8000-%012x", family, number)
}

@Suite("End to end: finding covers by themselves")
struct LookupEndToEndTests {
    @Test("Given a release id whose release has a front image and max_dimension 500, when synced, then the 500 thumbnail is cached from the archive, found by release, with no MusicBrainz request")
    func releaseFront() throws {
        // Given
        let release = mbid(1, 1)
        let world = try LookupWorld(
            ["releases": [["id": release, "title": "A Night at the Opera", "artist_credit": "Queen", "image": ["generate": [900, 900]]]]],
            settings: "[images]\nmax_dimension = 500\n")
        try world.record("a.json", [["title": "A Night at the Opera", "artist": "Queen", "mbid": release.uppercased(), "id": "opera"]])

        // When
        let daemon = try world.startDaemon()
        let snapshot = try daemon.waitForStatus("the cover cached") { $0.cached == 1 }

        // Then
        let album = try #require(snapshot.album("opera"))
        #expect(album.source == "release")
        #expect(album.mbid == release, "kept lower-case")
        #expect(album.resolvedURL == "\(world.services.archiveURL)/release/\(release)/front-500")
        #expect(world.coverSize("opera")?.width == 500)
        let seen = try world.services.requests()
        #expect(seen.byOrigin["mb"] ?? 0 == 0)
        #expect(try daemon.stop() == 0)
    }

    @Test("Given a release id whose release has no front image, when synced, then its release group, learnt from MusicBrainz, gives the cover")
    func releaseGroupLearnt() throws {
        let bare = mbid(2, 1), pictured = mbid(2, 2), group = mbid(2, 3)
        let world = try LookupWorld([
            "releases": [
                ["id": bare, "title": "Blue", "artist_credit": "Joni Mitchell", "release_group": group, "front": false],
                ["id": pictured, "title": "Blue", "artist_credit": "Joni Mitchell", "release_group": group],
            ],
            "release_groups": [["id": group, "title": "Blue", "front_release": pictured]],
        ])
        try world.record("a.json", [["title": "Blue", "artist": "Joni Mitchell", "musicbrainz_albumid": bare, "id": "blue"]])

        let daemon = try world.startDaemon()
        let snapshot = try daemon.waitForStatus("the cover cached") { $0.cached == 1 }

        let album = try #require(snapshot.album("blue"))
        #expect(album.source == "release-group")
        #expect(album.mbid == bare)
        #expect(album.releaseGroupMBID == group)
        #expect(album.resolvedURL == "\(world.services.archiveURL)/release-group/\(group)/front")
        #expect(try world.services.requests().paths["/ws/2/release/\(bare)"] == 1)
        #expect(try daemon.stop() == 0)
    }

    @Test("Given only a release-group id, when synced, then the group's front image is cached without a MusicBrainz request")
    func releaseGroupGiven() throws {
        let release = mbid(3, 1), group = mbid(3, 2)
        let world = try LookupWorld([
            "releases": [["id": release, "title": "Kind of Blue", "artist_credit": "Miles Davis", "release_group": group]],
            "release_groups": [["id": group, "title": "Kind of Blue"]],
        ])
        try world.record("a.json", [["title": "Kind of Blue", "artist": "Miles Davis", "musicbrainz_releasegroupid": group, "id": "kob"]])

        let daemon = try world.startDaemon()
        let snapshot = try daemon.waitForStatus("the cover cached") { $0.cached == 1 }

        #expect(snapshot.album("kob")?.source == "release-group")
        #expect(snapshot.album("kob")?.releaseGroupMBID == group)
        #expect(try world.services.requests().byOrigin["mb"] ?? 0 == 0)
        #expect(try daemon.stop() == 0)
    }

    @Test("Given a release id whose release and release group have no front image, when synced, then a search finds another group of the album with one")
    func releaseThenGroupThenSearch() throws {
        let bare = mbid(17, 1), bareGroup = mbid(17, 2), reissue = mbid(17, 3), reissueGroup = mbid(17, 4)
        let world = try LookupWorld([
            "releases": [
                ["id": bare, "title": "Harvest", "artist_credit": "Neil Young", "release_group": bareGroup, "front": false],
                ["id": reissue, "title": "Harvest", "artist_credit": "Neil Young", "release_group": reissueGroup],
            ],
            "release_groups": [["id": bareGroup, "title": "Harvest"], ["id": reissueGroup, "title": "Harvest"]],
        ])
        try world.record("a.json", [["title": "Harvest", "artist": "Neil Young", "mbid": bare, "id": "harvest"]])

        // When
        let daemon = try world.startDaemon()
        let snapshot = try daemon.waitForStatus("the cover cached or failed", timeout: 60) { $0.cached + $0.failed == 1 }

        // Then
        let album = try #require(snapshot.album("harvest"))
        #expect(album.state == "cached", "\(album.error ?? "")")
        #expect(album.source == "search")
        #expect(album.releaseGroupMBID == reissueGroup)
        #expect(album.resolvedURL == "\(world.services.archiveURL)/release-group/\(reissueGroup)/front")
        let seen = try world.services.requests()
        #expect(seen.paths["/ws/2/release/\(bare)"] == 1)
        #expect(seen.paths["/release-group/\(bareGroup)/front"] == 1, "the release's own group is asked once, not again for the search")
        #expect(try daemon.stop() == 0)
    }

    @Test("Given no ids and a decoy by another artist ranked first at 100, when searched, then the album's own artist's cover is taken")
    func searchPassesOverADecoy() throws {
        let queen = mbid(4, 1), queenGroup = mbid(4, 2), latifah = mbid(4, 3), latifahGroup = mbid(4, 4)
        let world = try LookupWorld([
            "releases": [
                ["id": queen, "title": "Greatest Hits", "artist_credit": "Queen", "release_group": queenGroup],
                ["id": latifah, "title": "Greatest Hits", "artist_credit": "Queen Latifah", "release_group": latifahGroup],
            ],
            "release_groups": [["id": queenGroup, "title": "Greatest Hits"], ["id": latifahGroup, "title": "Greatest Hits"]],
            "search_extra": [["entity": "release-group", "id": latifahGroup, "title": "Greatest Hits", "artist_credit": "Queen Latifah", "score": 100]],
        ])
        try world.record("a.json", [["title": "Greatest Hits", "artist": "Queen", "id": "hits"]])

        let daemon = try world.startDaemon()
        let snapshot = try daemon.waitForStatus("the cover cached") { $0.cached == 1 }

        let album = try #require(snapshot.album("hits"))
        #expect(album.source == "search")
        #expect(album.releaseGroupMBID == queenGroup)
        #expect(album.resolvedURL == "\(world.services.archiveURL)/release-group/\(queenGroup)/front")
        #expect(try daemon.stop() == 0)
    }

    @Test("Given names with Lucene's special characters and accents, when searched, then each is found as written", arguments: [
        ("AC/DC", "Back in Black"),
        ("\"Weird Al\" Yankovic", "Running with Scissors"),
        ("!!!", "Myth Takes"),
        ("Sigur Rós", "( )"),
        ("Mötley Crüe", "Dr. Feelgood"),
        ("Simon & Garfunkel", "Bridge over Troubled Water"),
    ])
    func searchEscapes(artist: String, title: String) throws {
        let release = mbid(5, 1), group = mbid(5, 2)
        let world = try LookupWorld([
            "releases": [["id": release, "title": title, "artist_credit": artist, "release_group": group]],
            "release_groups": [["id": group, "title": title]],
        ])
        try world.record("a.json", [["title": title, "artist": artist, "id": "escaped"]])

        let daemon = try world.startDaemon()
        let snapshot = try daemon.waitForStatus("the cover cached or failed") { $0.cached + $0.failed == 1 }

        #expect(snapshot.album("escaped")?.source == "search", "\(String(describing: snapshot.album("escaped")?.error))")
        #expect(snapshot.album("escaped")?.releaseGroupMBID == group)
        #expect(try daemon.stop() == 0)
    }

    @Test("Given a record without accents or punctuation, when searched, then it matches MusicBrainz's accented name")
    func accentsAndPunctuationNormalised() throws {
        let release = mbid(6, 1), group = mbid(6, 2)
        let world = try LookupWorld([
            "releases": [["id": release, "title": "Takk...", "artist_credit": "Sigur Rós", "release_group": group]],
            "release_groups": [["id": group, "title": "Takk..."]],
        ])
        try world.record("a.json", [["title": "takk", "artist": "SIGUR  ROS", "id": "agaetis"]])

        let daemon = try world.startDaemon()
        let snapshot = try daemon.waitForStatus("the cover cached or failed") { $0.cached + $0.failed == 1 }

        #expect(snapshot.album("agaetis")?.state == "cached", "\(String(describing: snapshot.album("agaetis")?.error))")
        #expect(try daemon.stop() == 0)
    }

    @Test("Given an album nothing knows, when looked up, then it is failed with an error beginning 'no cover found' that says what was tried, and is not looked up again soon")
    func nothingFound() throws {
        let unknown = mbid(7, 1)
        let world = try LookupWorld(["releases": []])
        try world.record("a.json", [["title": "Nothing", "artist": "Nobody", "mbid": unknown, "id": "nothing"]])

        let daemon = try world.startDaemon()
        let snapshot = try daemon.waitForStatus("the album failed") { $0.failed == 1 }

        let error = try #require(snapshot.album("nothing")?.error)
        #expect(error.hasPrefix("no cover found"), "\(error)")
        #expect(error.contains(unknown) && error.contains("search"), "\(error)")
        #expect(snapshot.album("nothing")?.source == nil)
        let table = try runCoverd(["status", "--cache", world.cache])
        #expect(table.stdout.contains("next try"), "\(table.stdout)")
        #expect(try daemon.stop() == 0)
    }

    @Test("Given max_dimension 1200 and an original smaller than 1200, when synced, then the missing 1200 thumbnail falls back to the original")
    func thumbnailFallsBackToTheOriginal() throws {
        let release = mbid(8, 1)
        let world = try LookupWorld(
            ["releases": [["id": release, "title": "Small", "artist_credit": "Artist", "image": ["generate": [600, 600]]]]],
            settings: "[images]\nmax_dimension = 1200\n")
        try world.record("a.json", [["title": "Small", "artist": "Artist", "mbid": release, "id": "small"]])

        let daemon = try world.startDaemon()
        let snapshot = try daemon.waitForStatus("the cover cached") { $0.cached == 1 }

        #expect(snapshot.album("small")?.resolvedURL == "\(world.services.archiveURL)/release/\(release)/front")
        #expect(world.coverSize("small")?.width == 600)
        #expect(try daemon.stop() == 0)
    }

    @Test("Given a record with both a cover_url and a release id, when synced, then the URL wins and neither service is asked")
    func explicitURLWins() throws {
        let release = mbid(9, 1)
        let world = try LookupWorld(["releases": [["id": release, "title": "T", "artist_credit": "A"]]])
        let server = try CoverServer(root: world.directory.sub("www"))
        try server.serve(PNGFixture.make(width: 30, height: 30, seed: 9), at: "c.png")
        try world.record("a.json", [["title": "T", "artist": "A", "mbid": release, "cover_url": server.url("c.png"), "id": "given"]])

        let daemon = try world.startDaemon()
        let snapshot = try daemon.waitForStatus("the cover cached") { $0.cached == 1 }

        #expect(snapshot.album("given")?.source == "url")
        #expect(snapshot.album("given")?.resolvedURL == server.url("c.png"))
        #expect(try world.services.requests().total == 0)
        #expect(try daemon.stop() == 0)
    }

    @Test("Given the app's albums.bin with an album without cover_url, when synced, then it is looked up by artist and title")
    func archiveAlbumLookedUp() throws {
        let release = mbid(10, 1), group = mbid(10, 2)
        let world = try LookupWorld([
            "releases": [["id": release, "title": "Rumours", "artist_credit": "Fleetwood Mac", "release_group": group]],
            "release_groups": [["id": group, "title": "Rumours"]],
        ])
        let archive = try ArchiveFixture.archive([.init(title: "Rumours", artist: "Fleetwood Mac", coverURL: nil)])
        try writeAtomically([UInt8](archive), to: world.records + "/albums.bin")

        let daemon = try world.startDaemon()
        let snapshot = try daemon.waitForStatus("the cover cached or failed") { $0.cached + $0.failed == 1 }

        #expect(snapshot.entries.first?.source == "search", "\(String(describing: snapshot.entries.first?.error))")
        #expect(try daemon.stop() == 0)
    }

    @Test("Given 15 albums to search for, when synced, then every cover is found and MusicBrainz never saw a request over its rate")
    func searchesKeepTheRate() throws {
        var releases: [[String: Any]] = []
        var albums: [[String: Any]] = []
        for index in 1...15 {
            releases.append(["id": mbid(11, index), "title": "Album \(index)", "artist_credit": "Band \(index)"])
            albums.append(["title": "Album \(index)", "artist": "Band \(index)"])
        }
        let world = try LookupWorld(["releases": releases])
        try world.record("a.json", albums)

        let daemon = try world.startDaemon()
        try daemon.waitForStatus("every cover cached", timeout: 90) { $0.cached == 15 }

        let seen = try world.services.requests()
        #expect(seen.overRate == 0)
        #expect(seen.maxAcceptedInWindow <= 2)
        // A burst would show as requests a few milliseconds apart; the network's jitter never comes near half a second.
        let gaps = zip(seen.acceptedTimes, seen.acceptedTimes.dropFirst()).map { $1 - $0 }
        #expect(gaps.count >= 14 && gaps.allSatisfy { $0 >= 0.5 }, "\(gaps)")
        #expect(gaps.reduce(0, +) / Double(max(gaps.count, 1)) >= 1.0, "at most one a second on average: \(gaps)")
        #expect(try daemon.stop() == 0)
    }

    @Test("Given covers found by release, by search and an album found nowhere, when the daemon restarts, then neither service is asked anything")
    func warmRestartAsksNothing() throws {
        let release = mbid(12, 1), group = mbid(12, 2)
        let world = try LookupWorld([
            "releases": [
                ["id": release, "title": "By Id", "artist_credit": "A"],
                ["id": mbid(12, 3), "title": "By Search", "artist_credit": "B", "release_group": group],
            ],
            "release_groups": [["id": group, "title": "By Search"]],
        ])
        try world.record("a.json", [
            ["title": "By Id", "artist": "A", "mbid": release, "id": "byid"],
            ["title": "By Search", "artist": "B", "id": "bysearch"],
            ["title": "Nowhere", "artist": "C", "id": "nowhere"],
        ])
        let first = try world.startDaemon()
        try first.waitForStatus("two cached, one failed", timeout: 60) { $0.cached == 2 && $0.failed == 1 }
        #expect(try first.stop() == 0)
        let before = try world.services.requests().total

        // When
        let second = try world.startDaemon()
        try second.waitUntilReady()
        // The check of the covers taken as cached at start is the last thing a restart does.
        try waitUntil("the cached covers checked") { second.log.contains("checked the 2 covers") }
        let snapshot = try second.status()

        // Then
        #expect(snapshot.cached == 2 && snapshot.failed == 1)
        #expect(try world.services.requests().total == before)
        #expect(try second.stop() == 0)
    }

    @Test("Given a contact in [sources], when coverd asks MusicBrainz, then its User-Agent names coverd, its version and the contact")
    func userAgentCarriesTheContact() throws {
        let world = try LookupWorld(["releases": []])
        try world.record("a.json", [["title": "Nothing", "artist": "Nobody", "id": "nothing"]])

        let daemon = try world.startDaemon()
        try daemon.waitForStatus("the album failed") { $0.failed == 1 }

        let agents = try world.services.requests().userAgents
        #expect(!agents.isEmpty && agents.allSatisfy { $0.hasPrefix("coverd/") && $0.hasSuffix(" ( coverd-tests@example.org )") }, "\(agents)")
        #expect(try daemon.stop() == 0)
    }

    @Test("Given sources.lookup = false, when a record has an album without cover_url, then it is rejected and nothing is asked")
    func lookupOff() throws {
        let world = try LookupWorld(["releases": []], settings: "")
        try writeAtomically((try String(contentsOfFile: world.config, encoding: .utf8)) + "lookup = false\n", to: world.config)
        try world.record("a.json", [["title": "T", "artist": "A", "id": "t"]])

        let daemon = try world.startDaemon()
        try daemon.waitUntilReady()
        try waitUntil("the album rejected") { daemon.log.contains("missing required field 'cover_url'") }

        #expect(try daemon.status().albums == 0)
        #expect(try world.services.requests().total == 0)
        #expect(try daemon.stop() == 0)
    }
}
