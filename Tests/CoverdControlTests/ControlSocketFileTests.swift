@testable import CoverdControl
import CoverdBase
import CoverdTestSupport
import Foundation
import Testing

@Suite("The control socket's file: its modes, its fallback, and what the server finds at its path")
struct ControlSocketFileTests {
    @Test("Given the runtime directory, when the server starts, then coverd/ is made 0700 (or tightened to it) and the socket is 0600")
    func privateModes() throws {
        let directory = TestDirectory("coverd-control")
        let runtime = directory.sub("run")
        #expect(mkdir(runtime + "/coverd", 0o755) == 0)
        let path = try ControlSocketPath.forDaemon(cacheDirectory: directory.sub("cache"), environment: ["XDG_RUNTIME_DIR": runtime])
        let server = ControlServer(socketPath: path, refresher: FakeRefresher(known: []), bus: EventBus(), ownsCache: true)

        // When
        try server.start()
        defer { server.stop() }

        // Then
        var info = stat()
        #expect(stat(path.directory, &info) == 0 && info.st_mode & 0o777 == 0o700)
        #expect(lstat(path.path, &info) == 0 && info.st_mode & S_IFMT == S_IFSOCK && info.st_mode & 0o777 == 0o600)
        let names = try FileManager.default.contentsOfDirectory(atPath: path.directory)
        #expect(names == [path.name], "no temporary name is left behind")
    }

    @Test("Given a runtime directory that belongs to another user, when the server starts, then it listens on the cache's coverd.sock instead and says why")
    func fallbackWhenTheRuntimeDirectoryIsNotOurs() throws {
        try #require(geteuid() == 0, "needs root to give a directory away")
        let directory = TestDirectory("coverd-control")
        let runtime = directory.sub("run")
        #expect(mkdir(runtime + "/coverd", 0o700) == 0 && chown(runtime + "/coverd", 65534, 65534) == 0)
        let cache = directory.sub("cache")
        let bus = EventBus()
        let notices = Posted(OperationFailed.self, on: bus)
        let server = ControlServer(
            socketPath: try ControlSocketPath.forDaemon(cacheDirectory: cache, environment: ["XDG_RUNTIME_DIR": runtime]),
            fallback: try ControlSocketPath.cacheFallback(cacheDirectory: cache), refresher: FakeRefresher(known: []), bus: bus, ownsCache: true)

        // When
        try server.start()
        defer { server.stop() }

        // Then
        #expect(server.listeningPath?.isCacheFallback == true)
        let candidates = try ControlSocketPath.clientCandidates(cacheDirectory: cache, environment: ["XDG_RUNTIME_DIR": runtime])
        let client = try ControlClient.connect(to: candidates, cache: cache, timeout: .seconds(2))
        #expect(client.socketPath == server.listeningPath)
        try waitUntil("the notice") { notices.all.contains { $0.error.contains("belongs to uid 65534") && $0.error.contains("trying") } }
    }

    @Test("Given a stale socket left by a killed daemon, when a server that holds the cache's lock starts, then it takes the path over and answers")
    func staleSocketReplaced() throws {
        let fixture = try ServerFixture(start: false)
        let stale = try UnixSocket.stream(nonBlocking: false, path: fixture.path.path)
        #expect(try UnixSocket.withAddress(directory: fixture.path.directory, name: fixture.path.name) { bind(stale.descriptor, $0, $1) } == 0)

        // When
        try fixture.server.start()
        defer { fixture.server.stop() }

        // Then
        let client = try fixture.client()
        try client.send(.follow)
        #expect(try client.next(timeout: .seconds(5)) != nil)
    }

    @Test("Given a live server on the path, when a second starts without the lock's word, then it refuses to take the path over")
    func liveSocketKept() throws {
        let fixture = try ServerFixture()
        defer { fixture.server.stop() }
        let second = ControlServer(socketPath: fixture.path, refresher: FakeRefresher(known: []), bus: EventBus(), ownsCache: false)

        #expect(throws: ControlError.alreadyListening(path: fixture.path.path)) { try second.start() }
        let client = try fixture.client()
        try client.send(.follow)
        #expect(try client.next(timeout: .seconds(5)) != nil)
    }

    @Test("Given a regular file where the socket goes, when the server starts, then it refuses and leaves the file alone")
    func notASocketLeftAlone() throws {
        let fixture = try ServerFixture(start: false)
        try writeAtomically("precious", to: fixture.path.path)

        #expect(throws: ControlError.notASocket(path: fixture.path.path)) { try fixture.server.start() }
        #expect(readBytes(fixture.path.path) == Array("precious".utf8))
    }
}
