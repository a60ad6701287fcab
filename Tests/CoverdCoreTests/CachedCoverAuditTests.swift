@testable import CoverdCore
import CoverdTestSupport
import Dispatch
import Foundation
import Synchronization
import Testing

/// The look at the disk the first scan puts off until after READY.
@Suite("Cached covers checked after the first scan")
struct CachedCoverAuditTests {
    /// A cache with a small cover for each of `ids`, and the store over it.
    func store(covering ids: [String], in directory: TestDirectory) throws -> CoverStore {
        let store = CoverStore(cacheDirectory: directory.path)
        try store.createDirectory()
        for (number, id) in ids.enumerated() {
            let temporary = try store.writeTemporary(Array(repeating: UInt8(number % 256), count: 100 + number), for: AlbumID(trusted: id))
            _ = try store.commit(temporary, as: AlbumID(trusted: id))
        }
        return store
    }

    /// What an audit handed to its target queue.
    final class Delivered: Sendable {
        let batches = Mutex<[([AlbumID], [FileStamp?])]>([])
        let totals = Mutex<(checked: Int, lost: Int)?>(nil)
    }

    /// Starts `audit` over `ids`, each batch reporting `lostPerBatch` lost.
    func run(_ audit: CachedCoverAudit, _ ids: [AlbumID], target: DispatchQueue, lostPerBatch: Int = 0) -> Delivered {
        let delivered = Delivered()
        audit.start(ids, target: target) { ids, stamps in
            delivered.batches.withLock { $0.append((ids, stamps)) }
            return lostPerBatch
        } finished: { checked, lost, _ in
            delivered.totals.withLock { $0 = (checked, lost) }
        }
        return delivered
    }

    @Test("Given 2,501 albums some of whose covers are gone, when checked, then every batch carries the disk's stamps in order and the totals come last")
    func batchesCarryTheDisksStamps() throws {
        // Given: every third cover deleted; more than two batches, the last one partial
        let directory = TestDirectory()
        let names = (0...2500).map { String(format: "a%04d", $0) }
        let store = try store(covering: names, in: directory)
        let ids = names.map { AlbumID(trusted: $0) }
        for id in ids.enumerated() where id.offset % 3 == 0 { _ = store.remove(id.element) }
        let target = DispatchQueue(label: "test.target")

        // When
        let delivered = run(CachedCoverAudit(store: store), ids, target: target, lostPerBatch: 2)
        try waitUntil("the totals") { delivered.totals.withLock { $0 != nil } }

        // Then
        let batches = delivered.batches.withLock { $0 }
        #expect(batches.map(\.0.count) == [1024, 1024, 453])
        #expect(batches.flatMap(\.0) == ids)
        #expect(batches.flatMap(\.1) == ids.map { store.stamp(for: $0) })
        #expect(batches.flatMap(\.1).filter { $0 == nil }.count == 834)
        let totals = try #require(delivered.totals.withLock { $0 })
        #expect(totals.checked == 2501)
        #expect(totals.lost == 6)
    }

    @Test("Given an audit whose lookups are held, when cancelled before they run, then no batch is decided and no totals are reported")
    func cancelledAuditDecidesNothing() throws {
        // Given
        let directory = TestDirectory()
        let store = try store(covering: ["a", "b"], in: directory)
        let lookups = DispatchQueue(label: "test.audit")
        lookups.suspend()
        let audit = CachedCoverAudit(store: store, queue: lookups)
        let target = DispatchQueue(label: "test.target")
        let delivered = run(audit, [AlbumID(trusted: "a"), AlbumID(trusted: "b")], target: target)

        // When
        audit.cancel()
        lookups.resume()
        audit.waitUntilIdle()
        target.sync {}

        // Then
        #expect(delivered.batches.withLock { $0.isEmpty })
        #expect(delivered.totals.withLock { $0 == nil })
    }

    @Test("Given no album to check, when started, then nothing is looked up or reported")
    func nothingToCheck() throws {
        let directory = TestDirectory()
        let audit = CachedCoverAudit(store: try store(covering: [], in: directory))
        let target = DispatchQueue(label: "test.target")
        let delivered = run(audit, [], target: target)
        audit.waitUntilIdle()
        target.sync {}
        #expect(delivered.batches.withLock { $0.isEmpty })
        #expect(delivered.totals.withLock { $0 == nil })
    }

    @Test("Given an index listing a cached cover whose file was deleted, when the daemon's parts start, then the cover is reported lost and the totals count it")
    func partsCheckAfterTheFirstScan() throws {
        // Given: album "x" in a record, cached in the index with a stamp, its file gone
        let directory = TestDirectory()
        let cache = directory.path + "/cache"
        try writeAtomically(#"{"id": "x", "title": "T", "artist": "A", "cover_url": "http://127.0.0.1:9/x.png"}"#, to: directory.sub("albums") + "/x.json")
        let album = Album(id: AlbumID(trusted: "x"), title: "T", artist: "A", coverURL: try CoverURL(validating: "http://127.0.0.1:9/x.png"), record: directory.sub("albums") + "/x.json")
        var row = IndexRow(album: album, state: .cached, updatedAt: Date())
        row.bytes = 1234
        row.fileMTime = 1_000_000_000
        try makeDirectories(cache)
        try CoverIndex(cacheDirectory: cache).apply([.upsert(row)])
        let bus = EventBus()
        let lost = Mutex<[CachedCoverLost]>([])
        let checked = Mutex<[CachedCoversChecked]>([])
        let queue = DispatchQueue(label: "test.observer")
        let tokens = [
            bus.observe(CachedCoverLost.self, on: queue) { message in lost.withLock { $0.append(message) } },
            bus.observe(CachedCoversChecked.self, on: queue) { message in checked.withLock { $0.append(message) } },
        ]
        defer { tokens.forEach { $0.cancel() } }
        let configuration = Configuration(recordsDirectory: directory.sub("albums"), cacheDirectory: cache)
        let parts = try DaemonParts(configuration: configuration, bus: bus)
        defer { parts.shutDown() }

        // When
        parts.watcher.start()

        // Then
        try waitUntil("the check's totals") { checked.withLock { !$0.isEmpty } }
        queue.sync {}
        let totals = try #require(checked.withLock { $0.first })
        #expect(totals.checked == 1)
        #expect(totals.lost == 1)
        let report = try #require(lost.withLock { $0.first })
        #expect(report.album.id == AlbumID(trusted: "x"))
        #expect(report.path == cache + "/covers/x.png")
        #expect(report.reason == "was missing")
    }
}
