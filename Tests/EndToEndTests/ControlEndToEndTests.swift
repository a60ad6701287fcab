import CoverdCache
import CoverdModel
import CoverdTestSupport
import Foundation
import Testing

extension World {
    /// A private `XDG_RUNTIME_DIR` for this world's daemons and clients.
    var runtime: [String: String] { ["XDG_RUNTIME_DIR": directory.sub("run")] }

    func startDaemon(environment: [String: String]) throws -> CoverdDaemon {
        try CoverdDaemon(records: records, cache: cache, environment: environment)
    }

    /// One album with the given id, its cover served, cached by a running daemon.
    func cachedAlbum(_ id: String, seed: Int, environment: [String: String] = [:]) throws -> CoverdDaemon {
        try cover("\(id).png", seed: seed)
        try record("\(id).json", album(id.capitalized, server.url("\(id).png"), extra: ", \"id\": \"\(id)\""))
        let daemon = try startDaemon(environment: environment)
        try daemon.waitForStatus("\(id) cached") { $0.cached == 1 }
        try daemon.waitUntilReady()
        return daemon
    }

    /// Each album's refresh mark in the index, read as `status` reads it.
    func refreshMarks() throws -> [String: RefreshMark?] {
        let rows = try CoverIndex(cacheDirectory: cache, readOnly: true).rows()
        return Dictionary(uniqueKeysWithValues: rows.map { ($0.id.rawValue, $0.refresh) })
    }

    func follow(_ extra: [String] = [], environment: [String: String] = [:], as user: Bool = false) throws -> CoverdStream {
        let arguments = ["status", "--follow", "--cache", cache] + extra
        if user {
            return try CoverdStream(
                ["--reuid=65534", "--regid=65534", "--clear-groups", coverdBinary] + arguments, executable: "/usr/bin/setpriv",
                environment: environment, files: directory.file("follow-nobody"))
        }
        return try CoverdStream(arguments, environment: environment, files: directory.file("follow-\(UUID().uuidString)"))
    }
}

@Suite("End to end: the control channel (coverd refresh, coverd status --follow)")
struct ControlEndToEndTests {
    @Test("Given a running daemon, when coverd refresh names its album, then it answers at once and logs it")
    func refreshAnsweredByTheDaemon() throws {
        let world = try World()
        let daemon = try world.cachedAlbum("alpha", seed: 1)

        // When
        let started = Date()
        let result = try runCoverd(["refresh", "alpha", "--cache", world.cache])

        // Then
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "refreshing 1 cover(s) (revalidated)\n")
        #expect(Date().timeIntervalSince(started) < 2)
        try waitUntil("the daemon to log the refresh") { daemon.log.contains("coverd refresh: revalidate 1 cover(s): refreshing 1") }
        // Acted on within a second: a conditional request, answered 304, and the file left alone.
        try waitUntil("a conditional request for alpha.png", timeout: 1) { try world.server.requests().notModified["/alpha.png", default: 0] == 1 }
        try waitUntil("the mark gone once confirmed") { try world.refreshMarks() == ["alpha": nil] }
        #expect(try world.server.requestCount("/alpha.png") == 2)
    }

    @Test("Given a running daemon, when coverd refresh --erase names its album, then within a second its cover is fetched anew without validators")
    func eraseOnARunningDaemon() throws {
        let world = try World()
        let daemon = try world.cachedAlbum("alpha", seed: 5)
        let requests = try world.server.requestCount("/alpha.png")

        // When
        let result = try runCoverd(["refresh", "alpha", "--erase", "--cache", world.cache])

        // Then
        #expect(result.status == 0, "\(result.stderr)")
        try waitUntil("alpha.png fetched anew", timeout: 1) { try world.server.requestCount("/alpha.png") == requests + 1 }
        #expect(try world.server.requests().conditional["/alpha.png"] == nil, "without validators")
        try daemon.waitForStatus("alpha cached again") { $0.album("alpha")?.state == "cached" && $0.album("alpha")?.outdated == false }
        #expect(try daemon.stop() == 0)
    }

    @Test("Given a stopped daemon, when coverd refresh marks a cover, then the next start asks its server again with its validators and clears the mark")
    func revalidateMarkTakenAtStart() throws {
        let world = try World()
        #expect(try world.cachedAlbum("alpha", seed: 6).stop() == 0)
        #expect(try runCoverd(["refresh", "alpha", "--cache", world.cache]).status == 0)
        #expect(try world.refreshMarks() == ["alpha": .revalidate])
        #expect(try status(cache: world.cache).album("alpha")?.outdated == true)

        // When
        let next = try world.startDaemon()

        // Then
        try waitUntil("a conditional request answered 304") { try world.server.requests().notModified["/alpha.png", default: 0] == 1 }
        try waitUntil("the mark cleared") { try world.refreshMarks() == ["alpha": nil] }
        #expect(try next.stop() == 0)
    }

    @Test("Given a running daemon, when coverd refresh names an unknown id, then it exits 1 naming it, and nothing changes")
    func unknownIDOnARunningDaemon() throws {
        let world = try World()
        let daemon = try world.cachedAlbum("alpha", seed: 2)
        let requests = try world.server.requestCount("/alpha.png")

        // When
        let result = try runCoverd(["refresh", "alpha", "ghost", "--all", "--cache", world.cache])

        // Then
        #expect(result.status == 1)
        #expect(result.stderr.contains("unknown album id(s): ghost; nothing was changed"), "\(result.stderr)")
        try waitUntil("the daemon to log the unknown id") { daemon.log.contains("unknown album id(s) ghost") }
        #expect(try daemon.status().cached == 1)
        #expect(try world.server.requestCount("/alpha.png") == requests)
    }

    @Test("Given a stopped daemon, when coverd refresh --erase names its album, then the index keeps the mark, and the next start takes it up")
    func refreshWhileStopped() throws {
        let world = try World()
        #expect(try world.cachedAlbum("alpha", seed: 3).stop() == 0)

        // When
        let unknown = try runCoverd(["refresh", "alpha", "ghost", "--cache", world.cache])
        let result = try runCoverd(["refresh", "alpha", "--erase", "--cache", world.cache])

        // Then
        #expect(unknown.status == 1 && unknown.stderr.contains("ghost"), "\(unknown.stderr)")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("marked 1 cover(s) to be erased and fetched anew"), "\(result.stdout)")
        #expect(try world.refreshMarks() == ["alpha": .erase])
        let requests = try world.server.requestCount("/alpha.png")
        let next = try world.startDaemon()
        try next.waitUntilReady()
        try next.waitForStatus("alpha cached again") { $0.cached == 1 }
        // Erased: fetched anew, without validators, and the mark cleared.
        try waitUntil("alpha.png fetched anew") { try world.server.requestCount("/alpha.png") == requests + 1 }
        #expect(try world.server.requests().conditional["/alpha.png"] == nil)
        try waitUntil("the mark cleared") { try world.refreshMarks() == ["alpha": nil] }
        #expect(try next.stop() == 0)
    }

    @Test("Given refresh with neither ids nor --all, or a bad id, then it is bad usage (64)")
    func refreshUsage() throws {
        let world = try World()
        #expect(try runCoverd(["refresh", "--cache", world.cache]).status == 64)
        #expect(try runCoverd(["refresh", "../x", "--cache", world.cache]).status == 64)
    }

    @Test("Given a running daemon, when status --follow runs, then it prints the summary line at once and a line as albums get cached, and SIGINT ends it quietly with 0")
    func followPrintsProgress() throws {
        let world = try World()
        let daemon = try world.cachedAlbum("alpha", seed: 4)

        // When
        let follow = try world.follow()
        try waitUntil("the first line") { follow.lines.count >= 1 }
        #expect(follow.lines.first == "1 albums: 1 cached, 0 pending, 0 failed")
        try world.cover("b1.png", seed: 41)
        try world.cover("b2.png", seed: 42)
        try world.record("b.json", "[" + world.album("B1", world.server.url("b1.png")) + "," + world.album("B2", world.server.url("b2.png")) + "]")

        // Then
        try waitUntil("the line with three cached") { follow.lines.last == "3 albums: 3 cached, 0 pending, 0 failed" }
        #expect(follow.lines.count >= 2)
        follow.send(SIGINT)
        #expect(try follow.waitForExit() == 0)
        #expect(follow.stderr.isEmpty, "\(follow.stderr)")
        #expect(daemon.isRunning)
    }

    @Test("Given status --follow --json, when it runs, then each line is a JSON object with the summary and the line")
    func followJSON() throws {
        let world = try World()
        let daemon = try world.cachedAlbum("alpha", seed: 5)
        defer { withExtendedLifetime(daemon) {} }

        // When
        let follow = try world.follow(["--json"])

        // Then
        try waitUntil("the first line") { follow.lines.count >= 1 }
        let object = try JSONSerialization.jsonObject(with: Data(follow.lines[0].utf8)) as? [String: Any]
        let summary = object?["summary"] as? [String: Any]
        #expect(summary?["cached"] as? Int == 1 && summary?["albums"] as? Int == 1 && summary?["outdated"] as? Int == 0)
        #expect(object?["line"] as? String == "1 albums: 1 cached, 0 pending, 0 failed")
    }

    @Test("Given status --follow, when the daemon stops, then it says so and exits 1")
    func followEndsWithTheDaemon() throws {
        let world = try World()
        let daemon = try world.cachedAlbum("alpha", seed: 6)
        let follow = try world.follow()
        try waitUntil("the first line") { follow.lines.count >= 1 }

        // When
        #expect(try daemon.stop() == 0)

        // Then
        #expect(try follow.waitForExit() == 1)
        #expect(follow.stderr.contains("the daemon stopped"), "\(follow.stderr)")
    }

    @Test("Given no daemon (a cache it left, or one that never was), when status --follow runs, then it exits 1 at once with a clear message")
    func followWithoutADaemon() throws {
        let world = try World()
        #expect(try world.cachedAlbum("alpha", seed: 7).stop() == 0)

        for cache in [world.cache, world.directory.path + "/never"] {
            // When
            let started = Date()
            let result = try runCoverd(["status", "--follow", "--cache", cache])

            // Then
            #expect(result.status == 1)
            #expect(result.stderr.contains("no coverd daemon is running with the cache"), "\(result.stderr)")
            #expect(result.stdout.isEmpty)
            #expect(Date().timeIntervalSince(started) < 5)
        }
    }

    @Test("Given a daemon killed with SIGKILL, when the next one starts, then it replaces the stale socket and answers")
    func staleSocketAfterAKill() throws {
        let world = try World()
        let killed = try world.cachedAlbum("alpha", seed: 8, environment: world.runtime)
        _ = try killed.stop(signal: SIGKILL)  // Its status is the signal; what matters is what it leaves behind.
        let sockets = try FileManager.default.contentsOfDirectory(atPath: world.runtime["XDG_RUNTIME_DIR"]! + "/coverd")
        #expect(sockets.count == 1, "the killed daemon's socket is still there: \(sockets)")

        // When
        let next = try world.startDaemon(environment: world.runtime)
        try next.waitUntilReady()

        // Then
        let result = try runCoverd(["refresh", "alpha", "--cache", world.cache], environment: world.runtime)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try next.stop() == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: world.runtime["XDG_RUNTIME_DIR"]! + "/coverd").isEmpty)
    }

    @Test("Given no usable place for the socket, when the daemon starts, then it warns and runs on, and refresh exits 1 saying it cannot reach it")
    func noSocketTheDaemonRunsOn() throws {
        let world = try World()
        let environment = ["XDG_RUNTIME_DIR": world.directory.path + "/missing"]
        try FileManager.default.createDirectory(atPath: world.cache + "/coverd.sock", withIntermediateDirectories: true)
        let daemon = try world.cachedAlbum("alpha", seed: 12, environment: environment)

        // When
        let refresh = try runCoverd(["refresh", "alpha", "--cache", world.cache], environment: environment)
        let follow = try runCoverd(["status", "--follow", "--cache", world.cache], environment: environment)

        // Then
        #expect(daemon.log.contains("cannot listen on a control socket"), "\(daemon.log)")
        #expect(daemon.log.contains("coverd refresh and status --follow cannot reach this daemon"))
        #expect(refresh.status == 1)
        #expect(refresh.stderr.contains("a coverd daemon (pid \(daemon.pid)) holds the cache, but"), "\(refresh.stderr)")
        #expect(follow.status == 1 && follow.stderr.contains("a coverd daemon (pid \(daemon.pid)) seems to run with the cache"), "\(follow.stderr)")
        #expect(try world.refreshMarks() == ["alpha": nil])
        #expect(try daemon.stop() == 0)
    }

    @Test("Given a daemon run by root, when a client runs as nobody, then the file modes keep it out, and with them opened up the daemon refuses it itself")
    func otherUserRefused() throws {
        try #require(geteuid() == 0, "needs root to run a client as nobody")
        let world = try World()
        let environment = world.runtime
        let daemon = try world.cachedAlbum("alpha", seed: 9, environment: environment)
        let runtime = environment["XDG_RUNTIME_DIR"]!
        for path in [world.directory.path, runtime] { #expect(chmod(path, 0o711) == 0) }

        // When: the socket as the daemon made it (0600 in a 0700 directory)
        let kept = try world.follow(environment: environment, as: true)

        // Then
        #expect(try kept.waitForExit() == 1)
        #expect(kept.stderr.contains("Permission denied"), "\(kept.stderr)")

        // When: the modes opened up, so only the daemon's own check is left
        let socket = try #require(try FileManager.default.contentsOfDirectory(atPath: runtime + "/coverd").first)
        #expect(chmod(runtime + "/coverd", 0o711) == 0 && chmod(runtime + "/coverd/" + socket, 0o666) == 0)
        let refused = try world.follow(environment: environment, as: true)

        // Then
        #expect(try refused.waitForExit() == 1)
        #expect(refused.stderr.contains("refused: only uid 0, the daemon's user, may use this socket"), "\(refused.stderr)")
        #expect(refused.lines.isEmpty)
        try waitUntil("the daemon to log the refusal") { daemon.log.contains("refused a control connection from uid 65534") }
        let refresh = try runCommand(
            "/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", coverdBinary, "refresh", "alpha", "--cache", world.cache],
            environment: environment)
        #expect(refresh.status == 1, "\(refresh.stdout)")
        #expect(try world.refreshMarks() == ["alpha": nil])
    }

    @Test("Given two daemons on two caches at once, when each cache's albums are refreshed, then each daemon answers only for its own cache")
    func twoDaemonsTwoCaches() throws {
        let first = try World()
        let second = try World()
        // One runtime directory for both, as for one user's two daemons.
        let environment = first.runtime
        let alpha = try first.cachedAlbum("alpha", seed: 10, environment: environment)
        let beta = try second.cachedAlbum("beta", seed: 11, environment: environment)
        let sockets = try FileManager.default.contentsOfDirectory(atPath: environment["XDG_RUNTIME_DIR"]! + "/coverd")
        #expect(sockets.count == 2, "\(sockets)")

        // When
        let own = [
            try runCoverd(["refresh", "alpha", "--cache", first.cache], environment: environment),
            try runCoverd(["refresh", "beta", "--cache", second.cache], environment: environment),
        ]
        let crossed = [
            try runCoverd(["refresh", "beta", "--cache", first.cache], environment: environment),
            try runCoverd(["refresh", "alpha", "--cache", second.cache], environment: environment),
        ]

        // Then
        #expect(own.map(\.status) == [0, 0], "\(own.map(\.stderr))")
        #expect(crossed.map(\.status) == [1, 1])
        #expect(crossed[0].stderr.contains("unknown album id(s): beta") && crossed[1].stderr.contains("unknown album id(s): alpha"))
        try waitUntil("each daemon to log its own refresh and the other's id as unknown") {
            alpha.log.contains("refreshing 1") && alpha.log.contains("unknown album id(s) beta")
                && beta.log.contains("refreshing 1") && beta.log.contains("unknown album id(s) alpha")
        }
    }
}
