import CoverdSystemd
import CoverdTestSupport
import Foundation
import Testing

@Suite("End to end: the sd_notify protocol", .serialized)
struct NotifyProtocolTests {
    func start(_ world: World, socket: NotifySocket, environment: [String: String] = [:], arguments: [String] = []) throws -> CoverdDaemon {
        try CoverdDaemon(
            records: world.records, cache: world.cache, arguments: arguments,
            environment: environment.merging(["NOTIFY_SOCKET": socket.address]) { $1 })
    }

    @Test("Given a path or an abstract NOTIFY_SOCKET, when the daemon starts, then READY=1 follows the scan without waiting for downloads",
          arguments: [false, true])
    func readyAfterScan(abstract: Bool) throws {
        let world = try World()
        let socket = try NotifySocket(directory: world.directory.path, abstract: abstract)
        try world.cover("slow.png", seed: 1)
        try world.cover("fast.png", seed: 2)
        try world.record("a.json", "[\(world.album("Slow", world.server.url("slow.png?delay_ms=4000"))), \(world.album("Fast", world.server.url("fast.png")))]")
        let daemon = try start(world, socket: socket)
        try waitUntil("READY=1") { socket.values("READY") == ["1"] }
        // The slow cover is still downloading: readiness did not wait for it.
        #expect(try daemon.status().entries.first { $0.title == "Slow" }?.state != "cached")
        // READY=1 and the log line are sent from different queues: wait for the line. The line on
        // how covers are made durable is posted before it and logged on the same serial queue.
        try daemon.waitUntilReady()
        #expect(daemon.log.contains("ready: 2 albums"))
        let durability = "covers in \(NSRegularExpression.escapedPattern(for: world.cache))/covers are made durable by (one syncfs per batch|an fsync of each cover and directory) \\("
        #expect(daemon.log.contains(try Regex(durability)))
        let ready = try #require(socket.all.first { $0["READY"] != nil })
        #expect(ready["STATUS"]?.hasPrefix("2 albums: ") == true || ready["STATUS"]?.hasPrefix("0 albums: ") == true)
        #expect(try daemon.stop() == 0)
    }

    @Test("Given covers to fetch, when they are all cached, then STATUS= ends in the contract's exact summary")
    func statusProgress() throws {
        let world = try World()
        let socket = try NotifySocket(directory: world.directory.path)
        var albums: [String] = []
        for index in 0..<6 {
            try world.cover("c\(index).png", seed: index + 1)
            albums.append(world.album("A\(index)", world.server.url("c\(index).png?delay_ms=300")))
        }
        try world.record("a.json", "[" + albums.joined(separator: ",") + "]")
        let daemon = try start(world, socket: socket, arguments: ["--concurrency", "2"])
        try waitUntil("all cached in STATUS") { socket.values("STATUS").last == "6 albums: 6 cached, 0 pending, 0 failed" }
        let statuses = socket.values("STATUS")
        let pattern = /^\d+ albums: \d+ cached, \d+ pending, \d+ failed(; .*)?$/
        #expect(statuses.allSatisfy { $0.wholeMatch(of: pattern) != nil }, "\(statuses)")
        #expect(statuses.contains { $0.hasPrefix("6 albums: ") && $0.contains(" pending") && !$0.contains(" 0 pending") })
        #expect(try daemon.stop() == 0)
    }

    @Test("Given WATCHDOG_USEC, when the daemon runs, then WATCHDOG=1 keeps coming; without it, never")
    func watchdogCadence() throws {
        let world = try World()
        let socket = try NotifySocket(directory: world.directory.path)
        let daemon = try start(world, socket: socket, environment: ["WATCHDOG_USEC": "1000000"])
        try waitUntil("four watchdog pings", timeout: 15) { socket.values("WATCHDOG").count >= 4 }
        #expect(try daemon.stop() == 0)

        let quiet = try World()
        let quietSocket = try NotifySocket(directory: quiet.directory.path)
        let other = try start(quiet, socket: quietSocket)
        try waitUntil("READY=1") { quietSocket.values("READY") == ["1"] }
        #expect(try other.stop() == 0)
        #expect(quietSocket.values("WATCHDOG").isEmpty)
    }

    @Test("Given SIGHUP, when the daemon reloads, then RELOADING=1 with MONOTONIC_USEC comes first and READY=1 after")
    func reload() throws {
        let world = try World()
        let socket = try NotifySocket(directory: world.directory.path)
        let daemon = try start(world, socket: socket)
        try waitUntil("READY=1") { socket.values("READY").count == 1 }
        let before = SystemdNotifier.monotonicMicroseconds()
        daemon.send(SIGHUP)
        try waitUntil("READY=1 again") { socket.values("READY").count == 2 }
        let messages = socket.all
        let reloading = try #require(messages.firstIndex { $0["RELOADING"] == "1" })
        let readyAgain = try #require(messages.lastIndex { $0["READY"] == "1" })
        #expect(reloading < readyAgain)
        let stamp = try #require(messages[reloading]["MONOTONIC_USEC"].flatMap { UInt64($0) })
        #expect(stamp >= before && stamp <= SystemdNotifier.monotonicMicroseconds())
        // The log is written asynchronously: the line may land after READY=1 reaches the socket.
        try waitUntil("the reload in the log") { daemon.log.contains("event=reloading") }
        #expect(try daemon.stop() == 0)
    }

    @Test("Given a reload with a broken configuration, when SIGHUP arrives, then the old one is kept and the daemon stays ready")
    func reloadWithBrokenConfig() throws {
        let world = try World()
        let socket = try NotifySocket(directory: world.directory.path)
        let file = world.directory.file("coverd.toml")
        try writeAtomically("[fetch]\nconcurrency = 4\n", to: file)
        let daemon = try start(world, socket: socket, arguments: ["--config", file])
        try waitUntil("READY=1") { socket.values("READY").count == 1 }
        try writeAtomically("[fetch]\nconcurrency = \"lots\"\n", to: file)
        daemon.send(SIGHUP)
        try waitUntil("READY=1 after the failed reload") { socket.values("READY").count == 2 }
        // READY=1 may reach the socket before the log line reaches the file: wait for the line, then check it.
        try waitUntil("the refusal in the log") { daemon.log.contains("keeping the previous configuration") }
        #expect(daemon.log.contains("keeping the previous configuration"))
        #expect(daemon.log.contains("\(file):2: fetch.concurrency"))
        #expect(daemon.isRunning)
        #expect(try daemon.stop() == 0)
    }

    @Test("Given SIGTERM, when the daemon stops, then STOPPING=1 is sent and it exits 0")
    func stopping() throws {
        let world = try World()
        let socket = try NotifySocket(directory: world.directory.path)
        let daemon = try start(world, socket: socket)
        try waitUntil("READY=1") { socket.values("READY") == ["1"] }
        #expect(try daemon.stop(signal: SIGTERM) == 0)
        #expect(socket.values("STOPPING") == ["1"])
    }

    @Test("Given a broken configuration, when the daemon starts, then it sends STATUS and ERRNO and exits 78")
    func badConfig() throws {
        let world = try World()
        let socket = try NotifySocket(directory: world.directory.path)
        let file = world.directory.file("coverd.toml")
        try writeAtomically("log_level = 3\n", to: file)
        let daemon = try start(world, socket: socket, arguments: ["--config", file])
        try waitUntil("exit") { !daemon.isRunning }
        #expect(try daemon.stop() == 78)
        #expect(socket.values("STATUS").last?.contains("\(file):1: log_level") == true)
        #expect(socket.values("ERRNO").last == String(EINVAL))
        #expect(socket.values("READY").isEmpty)
    }

    @Test("Given a cache path that is a file, when the daemon starts, then it reports the reason with ERRNO and exits 78")
    func fatalStartError() throws {
        let world = try World()
        let socket = try NotifySocket(directory: world.directory.path)
        try writeAtomically("not a directory", to: world.cache)
        let daemon = try start(world, socket: socket)
        try waitUntil("exit") { !daemon.isRunning }
        #expect(try daemon.stop() == 78)
        #expect(socket.values("STATUS").last?.contains("cannot create the cache directory") == true)
        #expect(socket.values("ERRNO").last == String(ENOTDIR))
    }
}
