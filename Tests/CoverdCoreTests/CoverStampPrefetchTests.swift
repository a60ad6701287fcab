@testable import CoverdCore
import CoverdTestSupport
import Dispatch
import Foundation
import Testing

/// Stamps read ahead at start-up: the first scan's decisions take them instead of an `lstat` each.
@Suite("Cover stamps read ahead")
struct CoverStampPrefetchTests {
    /// A cache with a small cover for each of `ids`, and the store over it.
    func store(covering ids: [String], in directory: TestDirectory) throws -> CoverStore {
        let store = CoverStore(cacheDirectory: directory.path)
        try store.createDirectory()
        for (number, id) in ids.enumerated() { _ = try write(id, bytes: 100 + number, in: store) }
        return store
    }

    /// Rows named `names`, numbered 0, 1, … as if loaded in that order.
    func rows(_ names: String...) -> [(loaded: Int, id: AlbumID)] {
        names.enumerated().map { ($0.offset, AlbumID(trusted: $0.element)) }
    }

    /// Stamps cover "a" (row 0) ahead over `store`, and waits for the read.
    func readAheadA(over store: CoverStore) -> CoverStampPrefetch {
        let prefetch = CoverStampPrefetch(store: store)
        prefetch.read(rows("a"))
        prefetch.waitUntilIdle()
        return prefetch
    }

    /// A prefetch whose reads wait until the returned queue is resumed.
    func suspendedPrefetch(over store: CoverStore) -> (CoverStampPrefetch, DispatchQueue) {
        let queue = DispatchQueue(label: "test.stamps")
        queue.suspend()
        return (CoverStampPrefetch(store: store, queue: queue), queue)
    }

    /// Cover "a" stamped ahead and then deleted: the window a read-ahead leaves.
    func coverReadAheadThenDeleted(in directory: TestDirectory) throws -> (files: StoreCoverFiles, stamp: FileStamp) {
        let store = try store(covering: ["a"], in: directory)
        let stamp = try #require(store.stamp(for: AlbumID(trusted: "a")))
        let prefetch = readAheadA(over: store)
        _ = store.remove(AlbumID(trusted: "a"))
        return (storeFiles(store, prefetch), stamp)
    }

    /// Checks cover "a" (row 0) with the index expecting `stamp`.
    func checkA(_ files: StoreCoverFiles, expecting stamp: FileStamp) throws -> CachedFileCheck {
        files.check(AlbumID(trusted: "a"), expected: try row("a", state: .cached, stamp: stamp), loaded: 0)
    }

    /// The real files over `store`, taking stamps read ahead from `prefetch`.
    func storeFiles(_ store: CoverStore, _ prefetch: CoverStampPrefetch) -> StoreCoverFiles {
        StoreCoverFiles(
            store: store, directorySync: DirectorySync(path: store.directory), limits: ImageLimits(), maxBytes: 1 << 20, prefetched: prefetch)
    }

    /// Writes `count` bytes as `id`'s cover, replacing any; returns its stamp.
    func write(_ id: String, bytes count: Int, in store: CoverStore) throws -> FileStamp {
        let temporary = try store.writeTemporary(Array(repeating: UInt8(count % 256), count: count), for: AlbumID(trusted: id))
        return try store.commit(temporary, as: AlbumID(trusted: id))
    }

    func row(_ id: String, state: CoverState, stamp: FileStamp?) throws -> IndexRow {
        let album = Album(id: AlbumID(trusted: id), title: "T", artist: "A", coverURL: try CoverURL(validating: "http://h/\(id).png"), record: "/r.json")
        var row = IndexRow(album: album, state: state, updatedAt: Date())
        row.bytes = stamp?.bytes
        row.fileMTime = stamp?.mtime
        return row
    }

    @Test("Given covers read ahead, when taken, then each present one has the disk's stamp, a missing one has none, and each is handed out once")
    func stampsAreTakenOnce() throws {
        // Given
        let directory = TestDirectory()
        let store = try store(covering: ["a", "b"], in: directory)
        let prefetch = CoverStampPrefetch(store: store)
        prefetch.read(rows("a", "b", "c"))
        prefetch.waitUntilIdle()

        // When
        let a = prefetch.take(0)
        let again = prefetch.take(0)

        // Then
        #expect(a != nil)
        #expect(a == store.stamp(for: AlbumID(trusted: "a")))
        #expect(again == nil)
        #expect(prefetch.take(1) == store.stamp(for: AlbumID(trusted: "b")))
        #expect(prefetch.take(2) == nil)
        #expect(prefetch.take(99) == nil)
    }

    @Test("Given stamps read ahead, when dropped at the end of the first scan, then none is handed out or read any more")
    func droppedStampsAreGone() throws {
        // Given
        let directory = TestDirectory()
        let prefetch = CoverStampPrefetch(store: try store(covering: ["a", "b"], in: directory))
        prefetch.read(rows("a"))
        prefetch.waitUntilIdle()

        // When
        prefetch.drop()
        prefetch.read([(1, AlbumID(trusted: "b"))])
        prefetch.waitUntilIdle()

        // Then
        #expect(prefetch.take(0) == nil)
        #expect(prefetch.take(1) == nil)
    }

    @Test("Given a cover asked for before its stamp was read, when the read lands later, then it is never handed out")
    func aRowAskedForEarlyStaysTaken() throws {
        // Given: the reads wait on a suspended queue, so the question comes first
        let directory = TestDirectory()
        let (prefetch, queue) = suspendedPrefetch(over: try store(covering: ["a", "b"], in: directory))
        prefetch.read(rows("a", "b"))
        let early = prefetch.take(0)

        // When
        queue.resume()
        prefetch.waitUntilIdle()

        // Then: "a" was decided on the disk's word and stays so; "b" was read as usual
        #expect(early == nil)
        #expect(prefetch.take(0) == nil)
        #expect(prefetch.take(1) != nil)
    }

    @Test("Given an index of 2,501 rows, when loaded with stamps read ahead, then each cached row's number in the load order finds its cover's stamp and no other row has one")
    func loadNumbersMatchTheRows() throws {
        // Given: even rows cached, odd rows pending; more than one batch, the last one partial
        let directory = TestDirectory()
        let ids = (0...2500).map { String(format: "a%04d", $0) }
        let store = try store(covering: ids, in: directory)
        let index = try CoverIndex(cacheDirectory: directory.path)
        try index.apply(try ids.enumerated().map { number, id in
            .upsert(try row(id, state: number % 2 == 0 ? .cached : .pending, stamp: store.stamp(for: AlbumID(trusted: id))))
        })
        let prefetch = CoverStampPrefetch(store: store)
        var planner = SyncPlanner(policy: RetryPolicy())

        // When
        try prefetch.readAhead(index, into: &planner)
        prefetch.waitUntilIdle()

        // Then
        for (number, id) in ids.enumerated() {
            let numbered = planner.persisted.claimNumbered(AlbumID(trusted: id))
            let claimed = try #require(numbered)
            let expected = number % 2 == 0 ? store.stamp(for: AlbumID(trusted: id)) : nil
            #expect(prefetch.take(claimed.loaded) == expected, "row \(id)")
        }
    }

    @Test("Given a stamp read ahead that shows the file as the index expects, when checked, then it decides without asking the disk")
    func checkTakesAMatchingStamp() throws {
        // Given: the cover went away after its stamp was read ahead (the window a read-ahead leaves)
        let directory = TestDirectory()
        let (files, stamp) = try coverReadAheadThenDeleted(in: directory)

        // When
        let first = try checkA(files, expecting: stamp)
        let second = try checkA(files, expecting: stamp)

        // Then: the first check took the stamp read ahead, the second asked the disk
        #expect(first == .valid(stamp))
        #expect(second == .missing)
    }

    @Test("Given a stamp read ahead that differs from what the index expects, when checked, then the disk is asked again")
    func checkLooksAgainOnAMismatch() throws {
        // Given: the stamp was read ahead, then the file was replaced by the one the index describes
        let directory = TestDirectory()
        let store = try store(covering: ["a"], in: directory)
        let prefetch = readAheadA(over: store)
        let now = try write("a", bytes: 4321, in: store)

        // When
        let result = try checkA(storeFiles(store, prefetch), expecting: now)

        // Then
        #expect(result == .valid(now))
    }

    @Test("Given reads still queued, when the table is dropped, then they keep nothing and nothing fails")
    func dropWhileReadsAreQueued() throws {
        // Given
        let directory = TestDirectory()
        let (prefetch, queue) = suspendedPrefetch(over: try store(covering: ["a", "b"], in: directory))
        prefetch.read(rows("a", "b"))

        // When
        prefetch.drop()
        queue.resume()
        prefetch.waitUntilIdle()

        // Then
        #expect(prefetch.isDropped)
        #expect(prefetch.take(0) == nil)
        #expect(prefetch.take(1) == nil)
    }

    @Test("Given a stamp read ahead of the same size but another time, when checked, then the disk is asked again")
    func checkLooksAgainWhenOnlyTheTimeDiffers() throws {
        // Given: the index expects the same size at another modification time
        let directory = TestDirectory()
        let (files, stamp) = try coverReadAheadThenDeleted(in: directory)

        // When
        let result = try checkA(files, expecting: FileStamp(bytes: stamp.bytes, mtime: stamp.mtime + 1_000_000_000))

        // Then: the disk says the file is gone
        #expect(result == .missing)
    }

    @Test("Given a cover missing when read ahead, when it appears before the decision, then the check finds it on the disk")
    func checkLooksAgainWhenNoFileWasReadAhead() throws {
        // Given
        let directory = TestDirectory()
        let store = try store(covering: [], in: directory)
        let prefetch = readAheadA(over: store)
        let now = try write("a", bytes: 321, in: store)

        // When
        let result = try checkA(storeFiles(store, prefetch), expecting: now)

        // Then
        #expect(result == .valid(now))
    }
}
