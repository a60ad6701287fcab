import CoverdModel
import CoverdSync
import CoverdTestSupport
import Foundation
import Testing

/// One test's world: a served directory, a records directory and a cache.
struct World {
    let directory = TestDirectory("coverd-e2e")
    let server: CoverServer
    let records: String
    let cache: String

    init() throws {
        server = try CoverServer(root: directory.sub("www"))
        records = directory.sub("albums")
        cache = directory.path + "/cache"
    }

    /// Serves a distinct PNG at `name` and returns its bytes.
    @discardableResult
    func cover(_ name: String, seed: Int) throws -> [UInt8] {
        let png = PNGFixture.make(width: 24 + seed % 7, height: 20, seed: seed)
        try server.serve(png, at: name)
        return png
    }

    func record(_ name: String, _ json: String) throws {
        try writeAtomically(json, to: records + "/" + name)
    }

    func album(_ title: String, _ url: String, artist: String = "Artist", extra: String = "") -> String {
        "{\"title\": \"\(title)\", \"artist\": \"\(artist)\", \"cover_url\": \"\(url)\"\(extra)}"
    }

    /// `count` albums in `a.json`, "Album 0" …, each with a distinct cover `c<i>.png`.
    func recordAlbums(_ count: Int, seed: Int = 1) throws {
        var albums: [String] = []
        for index in 0..<count {
            try cover("c\(index).png", seed: seed + index)
            albums.append(album("Album \(index)", server.url("c\(index).png")))
        }
        try record("a.json", "[" + albums.joined(separator: ",") + "]")
    }

    /// Records `count` albums (`recordAlbums`), has a daemon cache them all, and stops it cleanly.
    func syncThenStop(_ count: Int, seed: Int) throws {
        try recordAlbums(count, seed: seed)
        let daemon = try startDaemon()
        try daemon.waitForStatus("\(count) cached") { $0.cached == count }
        #expect(try daemon.stop() == 0)
    }

    /// A configuration file that turns lookups off (`sources.lookup = false`):
    /// an album without `cover_url` is then rejected, as records were checked before lookups.
    func noLookupConfig() throws -> String {
        let path = directory.path + "/no-lookup.toml"
        try writeAtomically("[sources]\nlookup = false\n", to: path)
        return path
    }

    func startDaemon(_ arguments: [String] = []) throws -> CoverdDaemon {
        try CoverdDaemon(records: records, cache: cache, arguments: arguments)
    }

    func coverPath(_ id: String) -> String { cache + "/covers/" + id + ".png" }

    /// Temporary files, as paths under the cache: names in covers/ that are not `<id>.png`, and anything in incoming/.
    func strayFiles() -> [String] {
        let covers = ((try? FileManager.default.contentsOfDirectory(atPath: cache + "/covers")) ?? []).filter { !$0.hasSuffix(".png") || $0.hasPrefix(".") }
        let incoming = (try? FileManager.default.contentsOfDirectory(atPath: cache + "/incoming")) ?? []
        return covers.map { "covers/" + $0 } + incoming.map { "incoming/" + $0 }
    }
}

/// A daemon with one album, its cover ("c.png", made with `seed`) cached:
/// the start of the tests that then damage or restore that cover.
struct OneCachedCover {
    let world: World
    let daemon: CoverdDaemon
    let png: [UInt8]
    let id: String
    var path: String { world.coverPath(id) }

    init(seed: Int) throws {
        world = try World()
        png = try world.cover("c.png", seed: seed)
        try world.record("a.json", world.album("Cover", world.server.url("c.png")))
        daemon = try world.startDaemon()
        id = try daemon.waitForStatus("cached") { $0.cached == 1 }.entries[0].id
    }

    /// Writes `bytes` over the cover in place and gives it back the times
    /// `before` had, so that only reading it can tell it changed.
    func rewrite(with bytes: [UInt8], keepingTimesOf before: stat) throws {
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.write(contentsOf: Data(bytes))
        try handle.close()
        var times = [before.st_atim, before.st_mtim]
        #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
    }
}
