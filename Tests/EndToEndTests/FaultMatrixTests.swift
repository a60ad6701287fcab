import CoverdCache
import CoverdTestSupport
import Foundation
import Testing

/// One row of the fault matrix: a hostile answer and the end state it must produce.
struct FaultCase: Sendable {
    enum Expected: Sendable {
        case cached
        case failed(String)
        /// Still pending, with a retry scheduled and this text in the error.
        case pending(String)
    }

    var name: String
    var path: String
    var expected: Expected
    /// The server's Retry-After, whose delay the second request must honour.
    var retryAfter: Double?
}

@Suite("End to end: hostile servers", .serialized)
struct FaultMatrixTests {
    static let cases: [FaultCase] = [
        FaultCase(name: "404", path: "fault/status/404", expected: .failed("HTTP 404")),
        FaultCase(name: "410", path: "fault/status/410", expected: .failed("HTTP 410")),
        FaultCase(name: "500 then 200", path: "fault/flaky/1/ok1.png", expected: .cached),
        FaultCase(name: "503 Retry-After: 3", path: "fault/retry-after/3/ok2.png", expected: .cached, retryAfter: 3),
        FaultCase(name: "503 Retry-After: <date +3 s>", path: "fault/retry-date/3/ok3.png", expected: .cached, retryAfter: 2),
        FaultCase(name: "429 Retry-After: 2", path: "fault/throttle/2/ok4.png", expected: .cached, retryAfter: 2),
        // The low-speed limit (2 s here), not the 10 s total timeout, must end these.
        FaultCase(name: "no response at all", path: "fault/silent", expected: .pending("Operation too slow")),
        FaultCase(name: "one byte per second", path: "fault/slow/1/ok5.png", expected: .pending("Operation too slow")),
        FaultCase(name: "body cut short of Content-Length", path: "fault/short/ok6.png", expected: .pending("transfer closed with")),
        FaultCase(name: "200 with an HTML page", path: "fault/html", expected: .failed("unsupported image format: html (not an image)")),
        FaultCase(name: "PNG with a broken CRC", path: "crc.png", expected: .failed("bad CRC in IDAT chunk")),
        FaultCase(name: "IHDR claiming 100000×100000", path: "bomb.png", expected: .failed("image is too large (100000×100000")),
        FaultCase(name: "far over the size cap, with Content-Length", path: "fault/huge?bytes=50000000&length=1",
                  expected: .failed("larger than the 1048576-byte limit")),
        FaultCase(name: "far over the size cap, without Content-Length", path: "fault/huge?bytes=50000000&length=0",
                  expected: .failed("larger than the 1048576-byte limit")),
        FaultCase(name: "redirect loop", path: "fault/redirect-loop/0", expected: .failed("more than 5 redirects")),
        FaultCase(name: "redirect to file:///etc/passwd", path: "fault/redirect-to?url=file:///etc/passwd",
                  expected: .failed("redirect to a URL coverd does not fetch")),
        FaultCase(name: "redirect to ftp://", path: "fault/redirect-to?url=ftp://127.0.0.1/x.png",
                  expected: .failed("redirect to a URL coverd does not fetch")),
        FaultCase(name: "three redirects to a valid PNG", path: "fault/redirect/3/ok7.png", expected: .cached),
        FaultCase(name: "connection reset mid-body", path: "fault/reset/ok8.png", expected: .pending("Connection reset by peer")),
    ]

    @Test("Given a server answering each cover with one fault, when synced, then each ends as it must and the cache holds only valid PNGs")
    func matrix() throws {
        let world = try World()
        var sources: [String: [UInt8]] = [:]
        for index in 1...8 { sources["ok\(index).png"] = try world.cover("ok\(index).png", seed: index) }
        try world.server.serve(PNGFixture.withBrokenCRC(PNGFixture.make()), at: "crc.png")
        try world.server.serve(PNGFixture.claiming(width: 100_000, height: 100_000), at: "bomb.png")
        let config = world.directory.file("coverd.toml")
        try writeAtomically("""
            [fetch]
            connect_timeout = 2
            low_speed_time = 2
            timeout = 10
            max_bytes = 1048576
            """, to: config)
        let albums = Self.cases.map { world.album($0.name, world.server.url($0.path)) }
        try world.record("faults.json", "[" + albums.joined(separator: ",\n") + "]")
        let started = Date()
        // Every row has its own slot: a slow row never delays another row's retry.
        let daemon = try world.startDaemon(["--config", config, "--concurrency", "64", "--per-host", "64"])

        let snapshot = try daemon.waitForStatus("every fault to reach its end state", timeout: 60) { snapshot in
            Self.cases.allSatisfy { fault in
                guard let entry = snapshot.entries.first(where: { $0.title == fault.name }) else { return false }
                switch fault.expected {
                case .cached: return entry.state == "cached"
                case .failed: return entry.state == "failed"
                case .pending(let text): return entry.state == "pending" && entry.error?.contains(text) == true
                }
            }
        }
        let rows = try CoverIndex(cacheDirectory: world.cache, readOnly: true).rows()
        let seen = try world.server.requests()
        var report = ["| fault | end state | reason |", "|---|---|---|"]
        for fault in Self.cases {
            let entry = try #require(snapshot.entries.first { $0.title == fault.name })
            let row = try #require(rows.first { $0.id.rawValue == entry.id })
            report.append("| \(fault.name) | \(entry.state) | \(entry.error ?? "") |")
            switch fault.expected {
            case .cached:
                let name = String(fault.path.split(separator: "/").last ?? "")
                #expect(readBytes(world.coverPath(entry.id)) == sources[name], "\(fault.name)")
            case .failed(let text):
                #expect(entry.error?.contains(text) == true, "\(fault.name): \(entry.error ?? "nil")")
                #expect(row.nextRetry.map { $0.timeIntervalSince(started) > 86_000 } == true, "\(fault.name): retried after a day")
            case .pending:
                // Backoff starts near a second and never exceeds the one-hour cap.
                let wait = row.nextRetry.map { $0.timeIntervalSince(row.updatedAt) } ?? -1
                #expect(wait >= 0.5 && wait <= 3600, "\(fault.name): next try \(wait) s after the failure")
                #expect(row.attempts >= 1)
            }
            if let retryAfter = fault.retryAfter {
                let path = "/" + String(fault.path.split(separator: "?")[0])
                let times = seen.times[path] ?? []
                #expect(times.count == 2, "\(fault.name): \(times)")
                if times.count == 2 {
                    let gap = times[1] - times[0]
                    #expect(gap >= retryAfter - 0.2 && gap <= retryAfter + 1, "\(fault.name): retried after \(gap) s")
                    report[report.count - 1] += " retried after \(String(format: "%.2f", gap)) s"
                }
            }
        }
        // The first retry of the 500 came after the first backoff: about a second (±25 %).
        let flaky = seen.times["/fault/flaky/1/ok1.png"] ?? []
        #expect(flaky.count == 2 && (0.7...2.0).contains(flaky[1] - flaky[0]), "500 then 200: \(flaky)")
        print(report.joined(separator: "\n"))
        #expect(daemon.isRunning)
        // Independent of coverd's own validator: every stored file is byte for byte one of the served covers.
        let served = Set(sources.values)
        for name in try FileManager.default.contentsOfDirectory(atPath: world.cache + "/covers") {
            #expect(name.hasSuffix(".png") && !name.hasPrefix("."), "stray file \(name)")
            #expect(served.contains(readBytes(world.cache + "/covers/" + name) ?? []), "\(name) is not a served cover")
        }
        #expect(try daemon.stop() == 0)
        #expect(world.strayFiles().isEmpty)
    }
}
