import CoverdCache
import CoverdTestSupport
import Foundation
import Testing

@Suite("End to end: hostile records", .serialized)
struct HostileRecordsTests {
    struct Manifest {
        var valid: [String: String]
        var badFiles: [(path: String, reasons: [String])]
        var badAlbums: [(path: String, position: Int, reasons: [String])]
        var archivedTitles: [String]

        init(_ data: Data) throws {
            guard let root = try JSONSerialization.jsonObject(with: data) as? [String: Any],
                let valid = root["valid"] as? [String: String], let files = root["bad_files"] as? [[Any]],
                let albums = root["bad_albums"] as? [[Any]], let titles = root["archived_titles"] as? [String]
            else { throw CocoaError(.coderReadCorrupt) }
            self.valid = valid
            badFiles = files.compactMap { entry in
                guard let path = entry[0] as? String, let reasons = entry[1] as? [String] else { return nil }
                return (path, reasons)
            }
            badAlbums = albums.compactMap { entry in
                guard let path = entry[0] as? String, let position = entry[1] as? Int, let reasons = entry[2] as? [String] else { return nil }
                return (path, position, reasons)
            }
            archivedTitles = titles
        }
    }

    /// Every file under `directory`, relative to it.
    static func tree(_ directory: String) -> Set<String> {
        Set(FileManager.default.enumerator(atPath: directory)?.compactMap { $0 as? String } ?? [])
    }

    @Test("Given 500+ malformed record files among valid ones, when scanned, then every valid album is cached and every bad one reported, with nothing written outside the cache")
    func corpus() throws {
        let world = try World()
        let support = URL(fileURLWithPath: CoverServer.scriptPath).deletingLastPathComponent()
        let top = support.deletingLastPathComponent().deletingLastPathComponent()
        let covers = try runTool(["python3", top.appendingPathComponent("scripts/make_sample_covers.py").path, world.server.root, "10", "40", "60"])
        try #require(covers.status == 0, "\(covers.stderr)")
        let generated = try runTool(["python3", support.appendingPathComponent("make_hostile_records.py").path, world.records, world.server.url(""), "10"])
        try #require(generated.status == 0, "\(generated.stderr)")
        let manifest = try Manifest(Data(generated.stdout.utf8))
        #expect(manifest.badFiles.count + manifest.badAlbums.count >= 500)
        let home = world.directory.sub("home")
        // Lookups off: the corpus's albums without a cover_url are bad albums, rejected alone.
        let config = try world.noLookupConfig()
        let before = Self.tree(world.directory.path)

        // A private HOME and no XDG directories: anything coverd wrote outside its cache would show.
        let daemon = try CoverdDaemon(
            records: world.records, cache: world.cache, arguments: ["--config", config],
            environment: ["HOME": home, "XDG_DATA_HOME": "", "XDG_CACHE_HOME": "", "XDG_CONFIG_HOME": ""])
        let expectedAlbums = manifest.valid.count + manifest.archivedTitles.count
        let snapshot = try daemon.waitForStatus("every valid album cached", timeout: 90) { $0.cached == expectedAlbums }
        #expect(snapshot.albums == expectedAlbums, "no bad album was loaded")
        for (id, cover) in manifest.valid {
            #expect(readBytes(world.coverPath(id)) == readBytes(world.server.root + "/" + cover), "\(id)")
        }
        #expect(Set(snapshot.entries.map(\.title)).isSuperset(of: manifest.archivedTitles))

        try waitUntil("every bad file reported") {
            let log = daemon.log
            return manifest.badFiles.allSatisfy { log.contains("cannot use record file \($0.path): ") }
        }
        let lines = daemon.log.split(separator: "\n")
        for bad in manifest.badFiles {
            let line = lines.first { $0.contains("cannot use record file \(bad.path): ") } ?? ""
            #expect(bad.reasons.contains { line.contains($0) }, "\(bad.path): expected \(bad.reasons), logged \(line.prefix(300))")
        }
        for bad in manifest.badAlbums {
            let prefix = "rejected album in \(bad.path): album \(bad.position) (line"
            let line = lines.first { $0.contains(prefix) } ?? ""
            #expect(bad.reasons.contains { line.contains($0) }, "\(bad.path) album \(bad.position): expected \(bad.reasons), logged \(line.prefix(300))")
        }
        #expect(daemon.isRunning)
        #expect(try runCoverd(["status", "--cache", world.cache]).status == 0)

        // Nothing outside the cache: besides it and its log, the tree is what the test made; HOME stays empty.
        let added = Self.tree(world.directory.path).subtracting(before)
        let outside = added.filter { !$0.hasPrefix("cache/") && $0 != "cache" && $0 != "cache.log" }
        #expect(outside.isEmpty, "written outside the cache: \(outside.sorted().prefix(10))")
        #expect(try FileManager.default.contentsOfDirectory(atPath: home).isEmpty)
        let ids = Set(snapshot.entries.map(\.id))
        for name in added where name.hasPrefix("cache/") && name != "cache/covers" {
            let file = String(name.dropFirst("cache/".count))
            let known = file.hasPrefix(CoverIndex.fileName) || file == ".coverd-reserve" || file == "incoming" || file == CacheLock.fileName
                || file == "removed" || file == "coverd.sock"  // the control socket where XDG_RUNTIME_DIR is unset
                || (file.hasPrefix("covers/") && ids.contains(String(file.dropFirst("covers/".count).dropLast(4))))
            #expect(known, "unexpected \(name) in the cache")
        }
        #expect(!FileManager.default.fileExists(atPath: "/abs.png") && !FileManager.default.fileExists(atPath: "/x.png"))
        #expect(try daemon.stop() == 0)
    }
}
