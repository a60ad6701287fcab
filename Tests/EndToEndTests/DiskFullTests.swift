import CoverdCore
import CoverdTestSupport
import Foundation
import Testing

/// Runs a command, failing the test if it fails.
@discardableResult
func shell(_ arguments: [String]) throws -> Int32 {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = arguments
    try process.run()
    process.waitUntilExit()
    return process.terminationStatus
}

@Suite("End to end: a full disk", .serialized)
struct DiskFullTests {
    @Test("Given a cache on a small tmpfs, when it fills up, then coverd says so, stores nothing partial, keeps running, and completes once space is freed",
          .enabled(if: getuid() == 0, "mounting a tmpfs needs root (CI runs as root)"))
    func fullDisk() throws {
        let world = try World()
        try FileManager.default.createDirectory(atPath: world.cache, withIntermediateDirectories: true)
        #expect(try shell(["mount", "-t", "tmpfs", "-o", "size=6m", "tmpfs", world.cache]) == 0)
        defer { _ = try? shell(["umount", "-l", world.cache]) }
        var expected: [String: [UInt8]] = [:]
        var albums: [String] = []
        for index in 0..<30 {
            let png = PNGFixture.make(width: 280, height: 280, seed: index + 1)
            try world.server.serve(png, at: "big\(index).png")
            expected["Big \(index)"] = png
            albums.append(world.album("Big \(index)", world.server.url("big\(index).png")))
        }
        try world.record("a.json", "[" + albums.joined(separator: ",") + "]")
        let config = world.directory.file("coverd.toml")
        try writeAtomically("[retry]\ninitial_delay = 0.5\nstorage_max_delay = 1\n", to: config)
        let daemon = try world.startDaemon(["--config", config])

        let full = try daemon.waitForStatus("the disk to be full", timeout: 60) { snapshot in
            snapshot.cached > 0 && snapshot.pending > 0
                && snapshot.entries.contains { $0.state == "pending" && $0.error?.contains("No space left on device") == true }
        }
        #expect(full.albums == 30 && full.failed == 0)
        try waitUntil("the log to explain") { daemon.log.contains("No space left on device") && daemon.log.contains("event=cover_failed") }
        #expect(daemon.isRunning)
        for entry in full.entries where entry.state == "cached" {
            #expect(readBytes(world.coverPath(entry.id)) == expected[entry.title], "\(entry.title) is whole")
        }
        for name in try FileManager.default.contentsOfDirectory(atPath: world.cache + "/covers") where name.hasSuffix(".png") {
            #expect(throws: Never.self) { try PNGValidator().validate(readBytes(world.cache + "/covers/" + name) ?? []) }
        }

        #expect(try shell(["mount", "-o", "remount,size=64m", world.cache]) == 0)
        let done = try daemon.waitForStatus("all cached once space is freed", timeout: 60) { $0.cached == 30 }
        for entry in done.entries { #expect(readBytes(world.coverPath(entry.id)) == expected[entry.title]) }
        #expect(try daemon.stop() == 0)
        #expect(world.strayFiles().isEmpty)
    }
}
