@testable import CoverdBase
@testable import CoverdCache
@testable import CoverdConfig
@testable import CoverdDaemon
@testable import CoverdFetch
@testable import CoverdModel
@testable import CoverdRecords
@testable import CoverdSync
import CoverdTestSupport
import Foundation
import Synchronization
import Testing

@Suite("Daemon parts")
struct DaemonPartsTests {
    /// The daemon's parts over `directory`'s records and cache, on a bus of their own.
    func makeParts(in directory: TestDirectory) throws -> DaemonParts {
        let configuration = Configuration(recordsDirectory: directory.sub("albums"), cacheDirectory: directory.path + "/cache")
        return try DaemonParts(configuration: configuration, bus: EventBus())
    }

    @Test("Given SQLite's result codes, when asked whether an index is corrupt, then only CORRUPT and NOTADB (with any extended code) say yes")
    func onlyDamageCountsAsCorrupt() {
        func error(_ code: Int32) -> IndexError { IndexError(operation: "read", path: "/c/index.sqlite3", code: code, message: "m", systemErrno: nil) }
        #expect([11, 26, 11 | (1 << 8), 11 | (2 << 8)].allSatisfy { error($0).isCorrupt })
        // BUSY, LOCKED, IOERR (and its extended codes), FULL, CANTOPEN, READONLY, PERM, NOMEM
        #expect(![5, 6, 10, 10 | (13 << 8), 13, 14, 8, 3, 7].contains { error($0).isCorrupt })
    }

    @Test("Given a daemon's parts holding a cache, when another set of parts starts on it, then it fails naming the holder's pid")
    func oneSetOfPartsPerCache() throws {
        let directory = TestDirectory()
        let parts = try makeParts(in: directory)
        defer { parts.shutDown() }
        let error = #expect(throws: DaemonError.self) { try makeParts(in: directory) }
        #expect(error?.message.contains("another coverd (pid \(getpid())) is already running with this cache") == true, "\(String(describing: error))")
    }

    @Test("Given the running parts, when the watchdog's probes are listed, then every work loop is probed and answers")
    func everyLoopIsProbed() throws {
        let directory = TestDirectory()
        let parts = try makeParts(in: directory)
        defer { parts.shutDown() }
        let probes = parts.probes
        #expect(probes.contains { $0 is CoverCoordinator })
        #expect(probes.contains { $0 is RecordWatcher })
        #expect(probes.contains { $0 is CurlFetcher })
        #expect(probes.contains { $0 is IndexWriter })
        let answered = Atomic<Int>(0)
        for probe in probes { probe.probe { answered.add(1, ordering: .relaxed) } }
        try waitUntil("every probe answered") { answered.load(ordering: .relaxed) == probes.count }
    }

    @Test("Given a fetcher that was shut down, when probed, then it never answers")
    func stoppedLoopIsSilent() throws {
        let fetcher = try CurlFetcher(settings: FetchSettings())
        fetcher.shutdown()
        let answered = Atomic<Bool>(false)
        fetcher.probe { answered.store(true, ordering: .relaxed) }
        // A live fetcher answers within milliseconds; the control below shows probes do get answered.
        let control = try CurlFetcher(settings: FetchSettings())
        let controlAnswered = Atomic<Bool>(false)
        control.probe { controlAnswered.store(true, ordering: .relaxed) }
        try waitUntil("the control fetcher to answer") { controlAnswered.load(ordering: .relaxed) }
        let stoppedAnswered = answered.load(ordering: .relaxed)
        #expect(!stoppedAnswered)
        control.shutdown()
    }

    @Test("Given an index listing a cached cover whose file was deleted, when the daemon's parts start, then the check's start is posted, the cover is reported lost and the totals count it")
    func partsCheckAfterTheFirstScan() throws {
        // Given: album "x" in a record, cached in the index with a stamp, its file gone
        let directory = TestDirectory()
        let cache = directory.path + "/cache"
        let record = directory.sub("albums") + "/x.json"
        try writeAtomically(#"{"id": "x", "title": "T", "artist": "A", "cover_url": "http://127.0.0.1:9/x.png"}"#, to: record)
        let album = Album(id: AlbumID(trusted: "x"), title: "T", artist: "A", coverURL: try CoverURL(validating: "http://127.0.0.1:9/x.png"), record: record)
        var row = IndexRow(album: album, state: .cached, updatedAt: Date())
        row.bytes = 1234
        row.fileMTime = 1_000_000_000
        try makeDirectories(cache)
        try CoverIndex(cacheDirectory: cache).apply([.upsert(row)])
        let bus = EventBus()
        let lost = Mutex<[CachedCoversLost]>([])
        let checked = Mutex<[CachedCoversChecked]>([])
        let begun = Mutex<[(count: Int, beforeTotals: Bool)]>([])
        let queue = DispatchQueue(label: "test.observer")
        let tokens = [
            bus.observe(CachedCoversCheckStarted.self, on: queue) { message in
                let beforeTotals = checked.withLock { $0.isEmpty }
                begun.withLock { $0.append((message.count, beforeTotals)) }
            },
            bus.observe(CachedCoversLost.self, on: queue) { message in lost.withLock { $0.append(message) } },
            bus.observe(CachedCoversChecked.self, on: queue) { message in checked.withLock { $0.append(message) } },
        ]
        defer { tokens.forEach { $0.cancel() } }
        let parts = try DaemonParts(configuration: Configuration(recordsDirectory: directory.sub("albums"), cacheDirectory: cache), bus: bus)
        defer { parts.shutDown() }

        // When
        parts.watcher.start()

        // Then
        try waitUntil("the check's totals") { checked.withLock { !$0.isEmpty } }
        queue.sync {}
        let totals = try #require(checked.withLock { $0.first })
        #expect(totals.compared == 1)
        #expect(totals.lost == 1)
        #expect(begun.withLock { $0.map(\.count) } == [1])
        #expect(begun.withLock { $0.allSatisfy(\.beforeTotals) })
        let covers = lost.withLock { $0.flatMap(\.covers) }
        #expect(covers.map(\.album.id) == [AlbumID(trusted: "x")])
        #expect(covers.map(\.path) == [cache + "/covers/x.png"])
        #expect(covers.map(\.reason) == ["cached cover was missing"])
    }
}
