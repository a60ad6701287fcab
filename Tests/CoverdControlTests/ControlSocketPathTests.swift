@testable import CoverdControl
import CoverdBase
import CoverdTestSupport
import Foundation
import Testing

@Suite("The control socket's path")
struct ControlSocketPathTests {
    @Test("Given two cache directories, when their daemons' sockets are worked out, then they differ, and each is $XDG_RUNTIME_DIR/coverd/<16 hex digits>.sock")
    func differentCachesDifferentSockets() throws {
        let directory = TestDirectory("coverd-path")
        let environment = ["XDG_RUNTIME_DIR": "/run/user/1000"]

        // When
        let first = try ControlSocketPath.forDaemon(cacheDirectory: directory.sub("a"), environment: environment)
        let second = try ControlSocketPath.forDaemon(cacheDirectory: directory.sub("b"), environment: environment)

        // Then
        #expect(first.path != second.path)
        for socket in [first, second] {
            #expect(socket.directory == "/run/user/1000/coverd")
            #expect(socket.name.count == 16 + ".sock".count && socket.name.hasSuffix(".sock"))
            #expect(socket.name.dropLast(5).allSatisfy { $0.isHexDigit && !$0.isUppercase })
            #expect(!socket.isCacheFallback)
        }
    }

    @Test("Given one cache reached through a symbolic link, a trailing slash and a dot, when the sockets are worked out, then they are the same")
    func sameCacheSameSocket() throws {
        let directory = TestDirectory("coverd-path")
        let cache = directory.sub("cache")
        try FileManager.default.createSymbolicLink(atPath: directory.file("link"), withDestinationPath: cache)
        let environment = ["XDG_RUNTIME_DIR": "/run/user/1000"]

        // When
        let paths = try [cache, directory.file("link"), cache + "/", directory.path + "/./cache"].map {
            try ControlSocketPath.forDaemon(cacheDirectory: $0, environment: environment).path
        }

        // Then
        #expect(Set(paths).count == 1)
    }

    @Test("Given no XDG_RUNTIME_DIR (or a relative one), when a daemon's socket is worked out, then it is the private fallback <cache>/coverd.sock")
    func fallbackInTheCache() throws {
        let directory = TestDirectory("coverd-path")
        let cache = directory.sub("cache")
        let canonical = try ControlSocketPath.canonicalPath(cache)

        for environment in [[:], ["XDG_RUNTIME_DIR": "relative/run"], ["XDG_RUNTIME_DIR": ""]] {
            // When
            let socket = try ControlSocketPath.forDaemon(cacheDirectory: cache, environment: environment)

            // Then
            #expect(socket.path == canonical + "/coverd.sock")
            #expect(socket.isCacheFallback)
        }
    }

    @Test("Given XDG_RUNTIME_DIR, when a client works out where to look, then it tries $XDG_RUNTIME_DIR/coverd, then /run/user/<uid>/coverd, then the cache")
    func clientCandidates() throws {
        let directory = TestDirectory("coverd-path")
        let cache = directory.sub("cache")

        // When
        let candidates = try ControlSocketPath.clientCandidates(cacheDirectory: cache, environment: ["XDG_RUNTIME_DIR": "/run/x"])

        // Then
        let daemon = try ControlSocketPath.forDaemon(cacheDirectory: cache, environment: ["XDG_RUNTIME_DIR": "/run/x"])
        let fallback = try ControlSocketPath.forDaemon(cacheDirectory: cache, environment: [:])
        #expect(candidates.map(\.path) == [daemon.path, "/run/user/\(geteuid())/coverd/\(daemon.name)", fallback.path])
    }

    @Test("Given a cache directory that does not exist, when a client works out where to look, then it is told no daemon can run with it")
    func missingCache() {
        #expect(throws: ControlError.self) {
            try ControlSocketPath.clientCandidates(cacheDirectory: "/nonexistent/coverd-cache", environment: [:])
        }
    }

    @Test("Given a cache path far longer than sun_path's 108 bytes, when a server listens in it, then a client still connects and is answered")
    func longPath() throws {
        let directory = TestDirectory("coverd-path")
        var deep = directory.path
        for index in 0..<6 { deep += "/" + String(repeating: Character(String(index)), count: 40) }
        try FileManager.default.createDirectory(atPath: deep, withIntermediateDirectories: true)
        let path = try ControlSocketPath.forDaemon(cacheDirectory: deep, environment: [:])
        #expect(path.path.utf8.count > 108)
        let server = ControlServer(socketPath: path, refresher: FakeRefresher(known: ["one"]), bus: EventBus(), ownsCache: true)
        try server.start()
        defer { server.stop() }

        // When
        let candidates = try ControlSocketPath.clientCandidates(cacheDirectory: deep, environment: [:])
        let client = try ControlClient.connect(to: candidates, cache: deep, timeout: .seconds(2))
        try client.send(.follow)

        // Then
        #expect(FileManager.default.fileExists(atPath: path.path))
        guard case .progress? = try client.next(timeout: .seconds(5)) else {
            Issue.record("no progress line")
            return
        }
    }
}
