import CoverdBase
import CoverdCache
@testable import CoverdFetch
import CoverdLookup
import CoverdModel
import CoverdRecords
import CoverdTestSupport
import Foundation
import Synchronization
import Testing

@testable import CoverdSync

/// A fetcher whose covers arrive when the test says, and that counts the
/// bodies given back. It ignores `cancel`, as a transfer that had already
/// finished when its cancel came would: the race the coordinator must survive.
private final class HeldFetcher: CoverFetching {
    private let held = Mutex<[@Sendable (FetchOutcome) -> Void]>([])
    let consumed = Atomic<Int>(0)

    var waiting: Int { held.withLock { $0.count } }

    func fetch(_ id: FetchID, url: CoverURL, purpose: FetchPurpose, completion: @escaping @Sendable (FetchOutcome) -> Void) {
        held.withLock { $0.append(completion) }
    }

    func cancel(_ id: FetchID) {}

    func bodyConsumed(bytes: Int) { consumed.add(1, ordering: .relaxed) }

    func apply(_ settings: FetchSettings) throws(SystemError) -> [String] { [] }

    func shutdown() {}

    /// Completes every held fetch with `bytes`.
    func deliver(_ bytes: [UInt8]) {
        for completion in held.withLock({ held in defer { held = [] }; return held }) {
            completion(.success(FetchedBody(bytes: bytes, httpStatus: 200, effectiveURL: "http://caa.test/front", duration: .zero)))
        }
    }
}

/// A coordinator on a real cache and index in a temporary directory, with a held fetcher.
private struct CoordinatorWorld {
    let directory = TestDirectory("coverd-coordinator")
    let bus = EventBus()
    let fetcher = HeldFetcher()
    let coordinator: CoverCoordinator

    init() throws {
        let cache = directory.sub("cache")
        let store = try CoverStore(cacheDirectory: cache, reserveBytes: 0).setUp().store
        let index = try CoverIndex(cacheDirectory: cache)
        var settings = LookupSettings()
        settings.coverArtArchiveURL = "http://caa.test"
        coordinator = CoverCoordinator(
            bus: bus, fetcher: fetcher, lookup: CoverLookup(fetcher: fetcher, settings: settings), index: index,
            writer: IndexWriter(index: index) { _ in }, store: store, settings: SyncSettings(), flushes: FlushBatcher(directory: store.directory))
        try coordinator.start()
    }

    func album() throws -> Album {
        try Album(
            id: AlbumID(validating: "held"), title: "Held", artist: "Artist", coverURL: nil,
            releaseID: MusicBrainzID("0d1e0a53-4a8c-4c55-9e6d-5b6b54c4e6e4"), record: directory.file("a.json"))
    }
}

@Suite("Coordinator: bodies found by lookups")
struct CoverCoordinatorLookupTests {
    @Test("Given a lookup whose album was withdrawn while its cover downloaded, when the cover arrives anyway, then its body is given back exactly once")
    func staleFoundBodyIsGivenBackOnce() async throws {
        let world = try CoordinatorWorld()
        let album = try world.album()
        world.bus.post(AlbumsUpdated(albums: [album]))
        #expect(await eventually { world.fetcher.waiting == 1 }, "the archive's front image asked for")

        // When
        world.bus.post(AlbumsWithdrawn(albums: [album]))
        await blocking { [coordinator = world.coordinator] in coordinator.drain() }
        world.fetcher.deliver(PNGFixture.make())

        // Then
        #expect(await eventually { world.fetcher.consumed.load(ordering: .relaxed) >= 1 })
        await blocking { [coordinator = world.coordinator] in
            coordinator.stop()
            coordinator.finish()
        }
        #expect(world.fetcher.consumed.load(ordering: .relaxed) == 1)
    }

    @Test("Given a lookup whose cover arrives after stop, when the coordinator finishes, then its body is given back exactly once and nothing is stored")
    func foundAfterStopIsGivenBackOnce() async throws {
        let world = try CoordinatorWorld()
        world.bus.post(AlbumsUpdated(albums: [try world.album()]))
        #expect(await eventually { world.fetcher.waiting == 1 })

        // When
        await blocking { [coordinator = world.coordinator] in coordinator.stop() }
        world.fetcher.deliver(PNGFixture.make())
        await blocking { [coordinator = world.coordinator] in coordinator.finish() }

        // Then
        #expect(world.fetcher.consumed.load(ordering: .relaxed) == 1)
        let covers = (try? FileManager.default.contentsOfDirectory(atPath: world.directory.sub("cache") + "/covers")) ?? []
        #expect(covers.isEmpty, "\(covers)")
    }
}
