import CoverdCore
import CoverdTestSupport
import Foundation
import Testing

@Suite("End to end: hostile records", .serialized)
struct HostileRecordsTests {
    struct Manifest: Decodable {
        var valid: [String: String]
        var bad_files: [String]
        var bad_albums: [[Position]]
        var archived_titles: [String]

        enum Position: Decodable {
            case path(String), index(Int)
            init(from decoder: Decoder) throws {
                let container = try decoder.singleValueContainer()
                if let index = try? container.decode(Int.self) { self = .index(index) } else { self = .path(try container.decode(String.self)) }
            }
        }
    }

    static func run(_ arguments: [String]) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return data
    }

    @Test("Given 500+ malformed record files among valid ones, when scanned, then every valid album is cached and every bad one reported, with nothing written outside the cache")
    func corpus() throws {
        let world = try World()
        let support = URL(fileURLWithPath: CoverServer.scriptPath).deletingLastPathComponent()
        let top = support.deletingLastPathComponent().deletingLastPathComponent()
        _ = try Self.run(["python3", top.appendingPathComponent("scripts/make_sample_covers.py").path, world.server.root, "10", "40", "60"])
        let data = try Self.run(["python3", support.appendingPathComponent("make_hostile_records.py").path, world.records, world.server.url(""), "10"])
        let manifest = try JSONDecoder().decode(Manifest.self, from: data)
        #expect(manifest.bad_files.count + manifest.bad_albums.count >= 500)

        let daemon = try world.startDaemon()
        let expectedAlbums = manifest.valid.count + manifest.archived_titles.count
        let snapshot = try daemon.waitForStatus("every valid album cached", timeout: 90) { $0.cached == expectedAlbums }
        #expect(snapshot.albums == expectedAlbums, "no bad album was loaded")
        for (id, cover) in manifest.valid {
            #expect(readBytes(world.coverPath(id)) == readBytes(world.server.root + "/" + cover), "\(id)")
        }
        #expect(Set(snapshot.entries.map(\.title)).isSuperset(of: manifest.archived_titles))

        try waitUntil("every bad file reported") {
            let log = daemon.log
            return manifest.bad_files.allSatisfy { log.contains("cannot use record file \($0): ") }
        }
        let log = daemon.log
        for entry in manifest.bad_albums {
            guard case .path(let path) = entry[0], case .index(let position) = entry[1] else { continue }
            #expect(log.contains("rejected album in \(path): album \(position) (line"), "\(path) album \(position)")
        }
        #expect(daemon.isRunning)
        #expect(try runCoverd(["status", "--cache", world.cache]).status == 0)

        // Nothing outside the cache: the test directory holds only what the test made and the cache.
        let made: Set<String> = ["www", "albums", "cache", "cache.log"]
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: world.directory.path)) == made)
        for name in try FileManager.default.contentsOfDirectory(atPath: world.cache) {
            #expect(name == "covers" || name.hasPrefix(CoverIndex.fileName), "unexpected \(name) in the cache")
        }
        for name in try FileManager.default.contentsOfDirectory(atPath: world.cache + "/covers") {
            #expect(name.hasPrefix("valid-") && name.hasSuffix(".png") || snapshot.entries.contains { "\($0.id).png" == name }, "unexpected cover \(name)")
        }
        #expect(!FileManager.default.fileExists(atPath: "/abs.png") && !FileManager.default.fileExists(atPath: world.directory.path + "/x.png"))
        #expect(try daemon.stop() == 0)
    }
}
