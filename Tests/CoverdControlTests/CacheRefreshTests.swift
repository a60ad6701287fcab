@testable import CoverdControl
import CoverdBase
import CoverdCache
import CoverdModel
import CoverdSync
import CoverdTestSupport
import Foundation
import Testing

/// A cache whose index holds cached albums, as a stopped daemon leaves it.
private struct StoppedCache {
    let directory = TestDirectory("coverd-refresh")
    let cache: String

    init(_ ids: [String]) throws {
        cache = directory.sub("cache")
        let index = try CoverIndex(cacheDirectory: cache)
        try index.apply(ids.map { id in
            .upsert(IndexRow(id: AlbumID(trusted: id), title: id, artist: "A", record: "/r.json", state: .cached, updatedAt: Date()))
        })
    }

    func marks() throws -> [String: RefreshMark?] {
        let rows = try CoverIndex(cacheDirectory: cache, readOnly: true).rows()
        return Dictionary(uniqueKeysWithValues: rows.map { ($0.id.rawValue, $0.refresh) })
    }

    func refresh(_ ids: [String], all: Bool = false, mark: RefreshMark = .revalidate) throws(CacheRefresh.Failure) -> CacheRefresh.Outcome {
        var refresh = CacheRefresh(cacheDirectory: cache, environment: [:])
        refresh.connectTimeout = .seconds(1)
        return try refresh.run(RefreshRequest(ids: ids.map { AlbumID(trusted: $0) }, all: all, mark: mark))
    }
}

@Suite("coverd refresh: the cache's lock decides between the index and the daemon")
struct CacheRefreshTests {
    @Test("Given no daemon, when covers are refreshed, then the index marks them for the next start and the lock is let go")
    func marksOffline() throws {
        let cache = try StoppedCache(["one", "two"])

        // When
        let outcome = try cache.refresh(["one"], mark: .erase)

        // Then
        #expect(outcome == .marked(count: 1))
        #expect(try cache.marks() == ["one": .erase, "two": nil])
        #expect(throws: Never.self) { _ = try CacheLock(cacheDirectory: cache.cache) }
    }

    @Test("Given no daemon, when --all is refreshed, then every album's cover is marked")
    func marksAllOffline() throws {
        let cache = try StoppedCache(["one", "two", "three"])

        #expect(try cache.refresh([], all: true) == .marked(count: 3))
        #expect(try cache.marks().values.allSatisfy { $0 == .revalidate })
    }

    @Test("Given no daemon, when an unknown id is among those refreshed, then it is named and nothing is marked")
    func unknownOffline() throws {
        let cache = try StoppedCache(["one"])

        #expect(try cache.refresh(["one", "ghost"]) == .unknown([AlbumID(trusted: "ghost")]))
        #expect(try cache.marks() == ["one": nil])
    }

    @Test("Given a cache no daemon ever used, when ids are refreshed, then they are unknown and no index is made")
    func noIndex() throws {
        let directory = TestDirectory("coverd-refresh")
        let refresh = CacheRefresh(cacheDirectory: directory.sub("cache"), environment: [:])

        #expect(try refresh.run(RefreshRequest(ids: [AlbumID(trusted: "one")], all: false, mark: .revalidate)) == .unknown([AlbumID(trusted: "one")]))
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/cache/" + CoverIndex.fileName))
    }

    @Test("Given a daemon holding the lock and listening, when covers are refreshed, then it is asked and answers, and the index is not touched")
    func throughTheDaemon() throws {
        let cache = try StoppedCache(["one"])
        let lock = try CacheLock(cacheDirectory: cache.cache)
        let refresher = FakeRefresher(known: ["one"])
        let server = ControlServer(
            socketPath: try ControlSocketPath.forDaemon(cacheDirectory: cache.cache, environment: [:]), refresher: refresher, bus: EventBus(),
            ownsCache: lock.isHeld)
        try server.start()
        defer { server.stop() }

        // When
        let outcome = try cache.refresh(["one"])

        // Then
        #expect(outcome == .refreshing(count: 1))
        #expect(refresher.requests.count == 1)
        #expect(try cache.marks() == ["one": nil])
        withExtendedLifetime(lock) {}
    }

    @Test("Given a daemon holding the lock whose socket is gone, when covers are refreshed, then it fails saying so, naming the daemon's pid")
    func daemonUnreachable() throws {
        let cache = try StoppedCache(["one"])
        let lock = try CacheLock(cacheDirectory: cache.cache)

        // When
        #expect {
            _ = try cache.refresh(["one"])
        } throws: { error in
            guard case .daemon(let pid, .noDaemon)? = error as? CacheRefresh.Failure else { return false }
            return pid == getpid() && "\(error)".contains("holds the cache")
        }

        // Then
        #expect(try cache.marks() == ["one": nil])
        withExtendedLifetime(lock) {}
    }
}
