import CoverdTestSupport
import Foundation
import Synchronization
import Testing

extension World {
    /// A configuration file with `[freshness] max_age` set to `seconds`.
    func maxAgeConfig(_ seconds: Int) throws -> String {
        let path = directory.path + "/freshness.toml"
        try writeAtomically("[freshness]\nmax_age = \(seconds)\n", to: path)
        return path
    }
}

/// Watches a cover's path from another thread, as a program showing covers
/// would, counting every look at which it was not a whole PNG.
final class CoverWatcher: Sendable {
    private let misses = Mutex<[String]>([])
    private let looks = Atomic<Int>(0)
    private let running = Atomic<Bool>(true)
    private let done = DispatchSemaphore(value: 0)

    init(_ path: String) {
        Thread.detachNewThread { [self] in
            while running.load(ordering: .relaxed) {
                looks.add(1, ordering: .relaxed)
                if let miss = CoverWatcher.problem(readBytes(path)) { misses.withLock { $0.append(miss) } }
            }
            done.signal()
        }
    }

    /// Why `bytes` is not a whole PNG (nil when it is): absent, no signature, or not ending in IEND.
    static func problem(_ bytes: [UInt8]?) -> String? {
        guard let bytes else { return "no file" }
        guard bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) else { return "no PNG signature (\(bytes.count) bytes)" }
        guard PNGChunks.list(bytes).last?.type == "IEND" else { return "no IEND (\(bytes.count) bytes)" }
        return nil
    }

    /// Stops watching; returns how many looks there were and what was wrong at any of them.
    func stop() -> (looks: Int, misses: [String]) {
        running.store(false, ordering: .relaxed)
        done.wait()
        return (looks.load(ordering: .relaxed), misses.withLock { $0 })
    }
}

@Suite("End to end: covers kept fresh (contract §8)")
struct FreshnessEndToEndTests {
    func inodeAndMTime(_ path: String) -> [Int]? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return [Int(info.st_ino), info.st_mtim.tv_sec, info.st_mtim.tv_nsec]
    }

    @Test("Given a cached cover and max_age of a second, when its server answers 304, then the file is not touched, checked_at moves and the log says it is current")
    func notModifiedLeavesTheFileAlone() throws {
        let world = try World()
        try world.cover("c.png", seed: 80)
        try world.record("c.json", world.album("Fresh", world.server.url("c.png"), extra: #", "id": "fresh""#))
        let daemon = try world.startDaemon(["--config", try world.maxAgeConfig(1)])
        let first = try daemon.waitForStatus("cached") { $0.cached == 1 }
        let before = try #require(inodeAndMTime(world.coverPath("fresh")))
        let checked = try #require(first.album("fresh")?.checkedAt)

        // When
        try waitUntil("two revalidations answered 304", timeout: 30) { try world.server.requests().notModified["/c.png", default: 0] >= 2 }

        // Then
        #expect(inodeAndMTime(world.coverPath("fresh")) == before, "not rewritten")
        let later = try daemon.waitForStatus("checked_at moved") { ($0.album("fresh")?.checkedAt ?? "") > checked }
        #expect(later.album("fresh")?.state == "cached")
        #expect(daemon.log.contains("revalidated=not_modified"), "\(daemon.log.suffix(2000))")
        #expect(try daemon.stop() == 0)
    }

    @Test("Given a cover changed on the server, when it is revalidated, then the new cover replaces the old with no moment without a whole PNG at its path")
    func changedCoverReplacedAtomically() throws {
        let world = try World()
        try world.cover("c.png", seed: 81)
        try world.record("c.json", world.album("Changing", world.server.url("c.png"), extra: #", "id": "changing""#))
        let daemon = try world.startDaemon(["--config", try world.maxAgeConfig(1)])
        try daemon.waitForStatus("cached") { $0.cached == 1 }
        let watcher = CoverWatcher(world.coverPath("changing"))

        // When
        let new = try world.cover("c.png", seed: 97)
        try waitUntil("the new cover in place", timeout: 30) { readBytes(world.coverPath("changing")) == new }

        // Then
        let watched = watcher.stop()
        #expect(watched.looks > 10)
        #expect(watched.misses.isEmpty, "\(watched.misses.prefix(5))")
        #expect(daemon.log.contains("revalidated=updated"), "\(daemon.log.suffix(2000))")
        #expect(try daemon.status().album("changing")?.state == "cached")
        #expect(try daemon.stop() == 0)
    }

    @Test("Given a server that fails every revalidation, when the cover is outdated, then the old cover stays cached, marked outdated, and the failure is retried")
    func failingServerKeepsTheOldCover() throws {
        let world = try World()
        let old = try world.cover("c.png", seed: 82)
        try world.record("c.json", world.album("Kept", world.server.url("c.png"), extra: #", "id": "kept""#))
        let daemon = try world.startDaemon(["--config", try world.maxAgeConfig(1)])
        try daemon.waitForStatus("cached") { $0.cached == 1 }

        // When
        try world.server.fail("/c.png", status: 500)
        try waitUntil("two failed revalidations", timeout: 30) {
            daemon.log.components(separatedBy: "could not revalidate").count > 2
        }

        // Then
        let snapshot = try daemon.status()
        #expect(snapshot.album("kept")?.state == "cached")
        #expect(snapshot.album("kept")?.outdated == true)
        #expect(snapshot.outdated == 1)
        #expect(readBytes(world.coverPath("kept")) == old)
        try world.server.fail("/c.png", status: 0)
        try daemon.waitForStatus("current again", timeout: 30) { $0.album("kept")?.outdated == false }
        #expect(try daemon.stop() == 0)
    }

    @Test("Given max_age of 0, when covers are cached, then none is ever asked again")
    func maxAgeZeroNeverRevalidates() throws {
        let world = try World()
        try world.cover("c.png", seed: 83)
        try world.record("c.json", world.album("Never", world.server.url("c.png"), extra: #", "id": "never""#))
        let daemon = try world.startDaemon(["--config", try world.maxAgeConfig(0)])
        try daemon.waitForStatus("cached") { $0.cached == 1 }
        // A reload is a moment the daemon surely acts on its settings; a request after it would show.
        daemon.send(SIGHUP)
        try waitUntil("the reload done") { daemon.log.components(separatedBy: "event=ready").count > 2 }

        #expect(try world.server.requests().conditional.isEmpty)
        #expect(try world.server.requests().paths["/c.png"] == 1)
        #expect(try daemon.status().album("never")?.outdated == false)
        #expect(try daemon.stop() == 0)
    }

    @Test("Given a cover found by search, when the archive's front image changes and the cover is outdated, then the new image is cached through the release found, with no new search")
    func lookedUpCoverFollowsTheArchive() throws {
        let release = mbid(80, 1)
        func fixtures(_ colour: [Int]) -> [String: Any] {
            ["releases": [["id": release, "title": "Kind of Blue", "artist_credit": "Miles Davis", "image": ["generate": [64, 64], "color": colour]]]]
        }
        let world = try LookupWorld(fixtures([200, 10, 10]), settings: "[freshness]\nmax_age = 1\n")
        try world.record("k.json", [["title": "Kind of Blue", "artist": "Miles Davis", "id": "kind"]])
        let daemon = try world.startDaemon()
        let first = try daemon.waitForStatus("found by search") { $0.album("kind")?.state == "cached" }
        #expect(first.album("kind")?.source == "search")
        let found = try #require(first.album("kind"))
        let old = try #require(readBytes(world.coverPath("kind")))
        let searches = try world.services.requests().byOrigin["mb"] ?? 0

        // When
        try world.services.replaceFixtures(fixtures([10, 10, 200]))

        // Then
        try waitUntil("the new front image cached", timeout: 30) { (readBytes(world.coverPath("kind")) ?? old) != old }
        #expect(try world.services.requests().byOrigin["mb"] ?? 0 == searches, "no MusicBrainz request: the release found is asked again")
        let snapshot = try daemon.status()
        let now = try #require(snapshot.album("kind"))
        #expect(now.source == "search" && now.mbid == found.mbid && now.releaseGroupMBID == found.releaseGroupMBID && now.resolvedURL == found.resolvedURL)
        #expect(found.mbid == release || found.releaseGroupMBID != nil, "\(found)")
        #expect(try daemon.stop() == 0)
    }

    @Test("Given a looked-up cover whose image host sends no validators, when it is revalidated and the same image comes back, then the file is not rewritten")
    func sameImageWithoutValidatorsIsNotRewritten() throws {
        let release = mbid(81, 1)
        let world = try LookupWorld(
            ["releases": [["id": release, "title": "Blue Train", "artist_credit": "John Coltrane", "image": ["generate": [64, 64]]]]],
            settings: "[freshness]\nmax_age = 1\n")
        try world.record("b.json", [["title": "Blue Train", "artist": "John Coltrane", "mbid": release, "id": "train"]])
        let daemon = try world.startDaemon()
        try daemon.waitForStatus("cached") { $0.album("train")?.state == "cached" }
        let before = try #require(inodeAndMTime(world.coverPath("train")))
        let images = try world.services.requests().byOrigin["images"] ?? 0

        // When
        try waitUntil("two revalidations at the image host", timeout: 30) { (try world.services.requests().byOrigin["images"] ?? 0) >= images + 2 }

        // Then
        #expect(inodeAndMTime(world.coverPath("train")) == before, "the same bytes: not renamed over")
        #expect(daemon.log.contains("revalidated=not_modified"))
        #expect(!daemon.log.contains("revalidated=updated"))
        #expect(try daemon.stop() == 0)
    }
}
