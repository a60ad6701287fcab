@testable import CoverdControl
import CoverdBase
import CoverdModel
import CoverdSync
import CoverdTestSupport
import Foundation
import Testing

@Suite("The control server")
struct ControlServerTests {
    @Test("Given a running server, when a client asks to refresh known ids, then the coordinator gets the request and the client the count")
    func refreshAnswered() throws {
        let fixture = try ServerFixture(known: ["one", "two"])
        defer { fixture.server.stop() }
        let answered = Posted(ControlRefreshAnswered.self, on: fixture.bus)

        // When
        let client = try fixture.client()
        try client.send(.refresh(RefreshRequest(ids: [AlbumID(trusted: "one")], all: false, mark: .erase)))

        // Then
        #expect(try client.next(timeout: .seconds(5)) == .refreshed(count: 1))
        #expect(try client.next(timeout: .seconds(5)) == nil)
        #expect(fixture.refresher.requests == [RefreshRequest(ids: [AlbumID(trusted: "one")], all: false, mark: .erase)])
        try waitUntil("the answer posted for the log") { answered.all.count == 1 }
    }

    @Test("Given a running server, when a client names an unknown id, then it is answered with that id")
    func refreshUnknown() throws {
        let fixture = try ServerFixture(known: ["one"])
        defer { fixture.server.stop() }

        // When
        let client = try fixture.client()
        try client.send(.refresh(RefreshRequest(ids: [AlbumID(trusted: "one"), AlbumID(trusted: "ghost")], all: false, mark: .revalidate)))

        // Then
        #expect(try client.next(timeout: .seconds(5)) == .unknown([AlbumID(trusted: "ghost")]))
    }

    @Test("Given a follower, when it connects, then it gets the current line at once, then a line per change, and 'stopping' when the server stops")
    func followerSeesChanges() throws {
        var limits = ControlServer.Limits()
        limits.followInterval = .milliseconds(100)
        let fixture = try ServerFixture(limits: limits)
        fixture.bus.post(SyncProgress(summary: SyncSummary(albums: 2, cached: 1, pending: 1)))
        fixture.bus.post(LifecycleChanged(.ready))
        fixture.server.drain()

        // When
        let client = try fixture.client()
        try client.send(.follow)

        // Then
        let first = try client.next(timeout: .seconds(5))
        #expect(first == .progress(FollowUpdate(summary: SyncSummary(albums: 2, cached: 1, pending: 1), note: nil)))
        try waitUntil("the follower registered") { fixture.server.connectionCount == 1 }
        fixture.bus.post(SyncProgress(summary: SyncSummary(albums: 2, cached: 2)))
        let second = try client.next(timeout: .seconds(5))
        #expect(second == .progress(FollowUpdate(summary: SyncSummary(albums: 2, cached: 2), note: nil)))
        fixture.server.stop()
        #expect(try client.next(timeout: .seconds(5)) == .stopping)
        #expect(try client.next(timeout: .seconds(5)) == nil)
        #expect(!FileManager.default.fileExists(atPath: fixture.path.path))
    }

    @Test("Given a follower while covers are pending, when the summary changes many times at once, then it hears at most one line per interval, and the last one")
    func followerThrottled() throws {
        var limits = ControlServer.Limits()
        limits.followInterval = .seconds(1)
        let fixture = try ServerFixture(limits: limits)
        defer { fixture.server.stop() }
        fixture.bus.post(LifecycleChanged(.ready))
        let client = try fixture.client()
        try client.send(.follow)
        _ = try client.next(timeout: .seconds(5))
        try waitUntil("the follower registered") { fixture.server.connectionCount == 1 }

        // When
        let started = ContinuousClock.now
        for cached in 0..<50 { fixture.bus.post(SyncProgress(summary: SyncSummary(albums: 100, cached: cached, pending: 100 - cached))) }

        // Then
        var lines: [FollowUpdate] = []
        while lines.last?.summary.cached != 49 {
            guard case .progress(let update)? = try client.next(timeout: .seconds(5)) else { break }
            lines.append(update)
        }
        #expect(lines.last?.summary.cached == 49)
        #expect(lines.count <= 2, "\(lines.map(\.line))")
        #expect(lines.count < 2 || ContinuousClock.now - started >= .milliseconds(900))
    }

    @Test("Given a request longer than the limit, when sent, then the client is told so and the connection is closed")
    func overlongRequest() throws {
        var limits = ControlServer.Limits()
        limits.maxRequestBytes = 1024
        let fixture = try ServerFixture(limits: limits)
        defer { fixture.server.stop() }

        // When
        let raw = try RawClient(fixture.path)
        raw.send([UInt8](repeating: UInt8(ascii: "{"), count: 4000))

        // Then
        let answer = raw.readToEnd()
        #expect(answer.hasPrefix("{\"error\": \"a request longer than 1024 bytes\"}\n"), "\(answer)")
        try waitUntil("the connection forgotten") { fixture.server.connectionCount == 0 }
    }

    @Test("Given bad JSON or an unknown request, when sent, then the client gets an error line and the connection closes", arguments: [
        ("not json\n", "bad request: not JSON"),
        ("{\"request\": \"reboot\"}\n", "bad request: unknown request \\\"reboot\\\""),
        ("{\"request\": \"refresh\", \"ids\": [\"a/b\"]}\n", "is not an album id"),
    ])
    func badRequests(text: String, expected: String) throws {
        let fixture = try ServerFixture()
        defer { fixture.server.stop() }

        // When
        let raw = try RawClient(fixture.path)
        raw.send(Array(text.utf8))

        // Then
        let answer = raw.readToEnd()
        #expect(answer.hasPrefix("{\"error\": ") && answer.contains(expected) && answer.hasSuffix("}\n"), "\(answer)")
        #expect(fixture.refresher.requests.isEmpty)
    }

    @Test("Given a client that connects and says nothing, when the request deadline passes, then it is told so and dropped")
    func silentClientTimesOut() throws {
        var limits = ControlServer.Limits()
        limits.requestTimeout = .milliseconds(200)
        let fixture = try ServerFixture(limits: limits)
        defer { fixture.server.stop() }

        // When
        let raw = try RawClient(fixture.path)

        // Then
        let answer = raw.readToEnd()
        #expect(answer.contains("no whole request within"), "\(answer)")
        try waitUntil("the connection forgotten") { fixture.server.connectionCount == 0 }
    }

    @Test("Given the most connections the server takes, when one more connects, then it is told the server is busy and closed")
    func connectionLimit() throws {
        var limits = ControlServer.Limits()
        limits.maxConnections = 2
        let fixture = try ServerFixture(limits: limits)
        defer { fixture.server.stop() }
        let followers = try (0..<2).map { _ in try fixture.client() }
        for follower in followers {
            try follower.send(.follow)
            _ = try follower.next(timeout: .seconds(5))
        }

        // When
        let raw = try RawClient(fixture.path)

        // Then
        #expect(raw.readToEnd().contains("busy: 2 connections already open"))
        #expect(fixture.server.connectionCount == 2)
    }

    @Test("Given another user (nobody), when it connects, then the daemon refuses it with a message, closes, and posts the refusal")
    func otherUserRefused() throws {
        try #require(geteuid() == 0, "needs root to run a client as nobody")
        let fixture = try ServerFixture()
        defer { fixture.server.stop() }
        let refused = Posted(ControlPeerRefused.self, on: fixture.bus)
        // The file modes are the first guard; opened up here, the peer credential check is the only one left.
        for path in [fixture.directory.path, fixture.path.directory] { #expect(chmod(path, 0o711) == 0) }
        #expect(chmod(fixture.path.path, 0o666) == 0)
        let script = """
            import socket, sys
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(5)
            s.connect(sys.argv[1])
            try:
                s.sendall(b'{"request": "follow"}\\n')
            except BrokenPipeError:
                pass  # refused and closed before the request went out: the reason is still there to read
            data = b''
            while True:
                try:
                    chunk = s.recv(4096)
                except ConnectionResetError:
                    break  # what the daemon had sent was read first; the reset is its close with our request unread
                if not chunk:
                    break
                data += chunk
            sys.stdout.write(data.decode())
            """

        // When
        let result = try runTool(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-c", script, fixture.path.path])

        // Then
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("{\"error\": \"refused: only uid 0, the daemon's user, may use this socket\"}"), "\(result.stdout)")
        try waitUntil("the refusal posted") { refused.all.first?.uid == 65534 }
        #expect(fixture.server.connectionCount == 0)
    }

    @Test("Given a first place the client cannot use (a symbolic link loop) and the daemon in the next, when it connects, then it reaches the daemon")
    func laterCandidateReached() throws {
        let fixture = try ServerFixture()
        defer { fixture.server.stop() }
        let loop = fixture.directory.file("loop")
        try FileManager.default.createSymbolicLink(atPath: loop, withDestinationPath: loop)
        let unusable = ControlSocketPath(directory: loop, name: "x.sock", isCacheFallback: false)

        // When
        let client = try ControlClient.connect(to: [unusable, fixture.path], cache: "c", timeout: .seconds(1))

        // Then
        #expect(client.socketPath == fixture.path)
        #expect {
            try ControlClient.connect(to: [unusable], cache: "c", timeout: .seconds(1))
        } throws: { error in
            guard case .unreachable(_, let problem)? = error as? ControlError else { return false }
            return problem.code == ELOOP
        }
    }

    @Test("Given no server, when a client connects, then it is told no daemon runs, naming where it looked")
    func noDaemon() throws {
        let fixture = try ServerFixture(start: false)
        #expect(throws: ControlError.noDaemon(cache: "c", tried: [fixture.path.path])) {
            try ControlClient.connect(to: [fixture.path], cache: "c", timeout: .seconds(1))
        }
    }

    @Test("Given a socket where the client looks, served by another user's process, when the client connects, then it refuses to believe it")
    func foreignServerIsNotBelieved() throws {
        let directory = TestDirectory()
        #expect(chmod(directory.path, 0o777) == 0)
        let path = directory.file("planted.sock")
        let script = """
            import socket, sys, time
            server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            server.bind(sys.argv[1])
            server.listen(1)
            print("listening", flush=True)
            connection, _ = server.accept()
            connection.sendall(b'{"refreshed": 1}\\n')
            time.sleep(5)
            """
        let planted = Process()
        planted.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        planted.arguments = ["--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-c", script, path]
        let output = Pipe()
        planted.standardOutput = output
        try planted.run()
        defer { planted.terminate() }
        _ = output.fileHandleForReading.readData(ofLength: 10)  // "listening"

        // When / Then
        #expect {
            try ControlClient.connect(to: [ControlSocketPath(directory: directory.path, name: "planted.sock", isCacheFallback: false)], cache: "c", timeout: .seconds(2))
        } throws: { error in
            guard case .refused(_, let message)? = error as? ControlError else { return false }
            return message.contains("another user")
        }
    }
}
