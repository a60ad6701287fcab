@testable import CoverdCore
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
}
