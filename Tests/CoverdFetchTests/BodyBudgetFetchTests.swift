@testable import CoverdBase
@testable import CoverdFetch
@testable import CoverdModel
import CoverdTestSupport
import Dispatch
import Foundation
import Synchronization
import Testing

/// The fetcher's body budget against a real local server: bodies in memory
/// are bounded in bytes, whatever their number, and transfers wait paused.
@Suite("Body budget of the curl fetcher", .serialized)
struct BodyBudgetFetchTests {
    @Test("Given covers larger than half the body budget and a consumer that keeps every body, when fetched, then at most the budget and one body are in memory and the other transfers wait paused; once bodies are consumed, each arrives whole")
    func bodiesWaitForRoom() throws {
        // Given: six covers of 300 KiB, all six transfers at once, 512 KiB of bodies in memory
        let directory = TestDirectory()
        let server = try CoverServer(root: directory.sub("www"))
        let size = 300 << 10
        var covers: [FetchID: [UInt8]] = [:]
        for index in 0..<6 {
            var generator = SplitMix64(seed: UInt64(index + 1))
            let bytes = (0..<size).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            try server.serve(bytes, at: "c\(index).bin")
            covers[FetchID(UInt64(index))] = bytes
        }
        var settings = FetchSettings()
        settings.concurrency = 6
        settings.perHost = 6
        let budget = 512 << 10
        let fetcher = try CurlFetcher(settings: settings, userAgent: nil, longestWait: CurlSocketDriver.defaultLongestWait, bodyMemory: budget)
        defer { fetcher.shutdown() }
        let outcomes = FetchOutcomes()

        // When: fetched, and no body consumed
        for index in 0..<6 {
            let id = FetchID(UInt64(index))
            fetcher.fetch(id, url: try CoverURL(validating: server.url("c\(index).bin"))) { outcomes.record(id, $0) }
        }

        // Then: every transfer delivered or paused; the oldest may pass the budget by its one body while none waits
        try waitUntil("every transfer delivered or paused") { try snapshot(of: fetcher).paused + outcomes.all.count == 6 }
        let spent = try snapshot(of: fetcher)
        #expect((1...2).contains(outcomes.all.count))
        #expect(spent.held == outcomes.all.count * size)
        #expect(spent.held + spent.receiving <= budget + size)

        // When: each body is consumed as it arrives (two may arrive together: the oldest transfer may pass the budget)
        var consumed = 0
        try waitUntil("every body") {
            let delivered = outcomes.all.count
            while consumed < delivered {
                fetcher.bodyConsumed(bytes: size)
                consumed += 1
            }
            let spent = try snapshot(of: fetcher)
            #expect(spent.held + spent.receiving <= budget + size)
            return delivered == 6
        }

        // Then
        for (id, bytes) in covers {
            guard case .success(let body)? = outcomes[id] else {
                Issue.record("\(id): \(String(describing: outcomes[id]))")
                continue
            }
            #expect(body.bytes == bytes, "\(id)")
        }
        #expect(try snapshot(of: fetcher) == BodyBudget.Snapshot(held: 0, receiving: 0, paused: 0))
    }

    @Test("Given a cover larger than the whole body budget, when fetched with nothing else held, then it still arrives whole")
    func bodyLargerThanTheBudgetArrives() throws {
        // Given
        let directory = TestDirectory()
        let server = try CoverServer(root: directory.sub("www"))
        var generator = SplitMix64(seed: 9)
        let bytes = (0..<(400 << 10)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        try server.serve(bytes, at: "big.bin")
        let fetcher = try CurlFetcher(settings: FetchSettings(), userAgent: nil, longestWait: CurlSocketDriver.defaultLongestWait, bodyMemory: 64 << 10)
        defer { fetcher.shutdown() }
        let outcomes = FetchOutcomes()

        // When
        fetcher.fetch(FetchID(1), url: try CoverURL(validating: server.url("big.bin"))) { outcomes.record(FetchID(1), $0) }

        // Then
        try waitUntil("the cover") { outcomes.all.count == 1 }
        guard case .success(let body)? = outcomes[FetchID(1)] else {
            Issue.record("expected the cover, got \(String(describing: outcomes[FetchID(1)]))")
            return
        }
        #expect(body.bytes == bytes)
    }

    @Test("Given three bodies of unannounced length, each larger than the body budget, when fetched at once and consumed as they arrive, then each arrives whole: none waits on another for ever")
    func unannouncedBodiesSharingTheBudgetArrive() throws {
        // Given: 4 MiB each, no Content-Length (the server closes the connection), 2 MiB of bodies in memory
        let directory = TestDirectory()
        let server = try CoverServer(root: directory.sub("www"))
        let size = 4 << 20
        var settings = FetchSettings()
        settings.concurrency = 3
        settings.perHost = 3
        settings.totalTimeout = .seconds(30)
        let fetcher = try CurlFetcher(settings: settings, userAgent: nil, longestWait: CurlSocketDriver.defaultLongestWait, bodyMemory: 2 << 20)
        defer { fetcher.shutdown() }
        let outcomes = FetchOutcomes()

        // When
        for index in 0..<3 {
            let id = FetchID(UInt64(index))
            let url = try CoverURL(validating: server.url("fault/huge?bytes=\(size)&length=0&n=\(index)"))
            fetcher.fetch(id, url: url) { outcome in
                if case .success(let body) = outcome { fetcher.bodyConsumed(bytes: body.bytes.count) }
                outcomes.record(id, outcome)
            }
        }

        // Then
        try waitUntil("all three bodies", timeout: 45) { outcomes.all.count == 3 }
        for index in 0..<3 {
            guard case .success(let body)? = outcomes[FetchID(UInt64(index))] else {
                Issue.record("\(index): \(String(describing: outcomes[FetchID(UInt64(index))]))")
                continue
            }
            #expect(body.bytes.count == size)
        }
        #expect(try snapshot(of: fetcher) == BodyBudget.Snapshot(held: 0, receiving: 0, paused: 0))
    }

    @Test("Given a server that announces a longer body than it sends, when that body is delivered and consumed, then the budget is empty again and the next cover starts")
    func shortBodyLeavesNothingHeld() throws {
        // Given: 1 MiB announced, 1 KiB sent chunked; a budget of 512 KiB
        let directory = TestDirectory()
        let server = try CoverServer(root: directory.sub("www"))
        try server.serve(Array(repeating: 7, count: 4_096), at: "next.bin")
        let fetcher = try CurlFetcher(settings: FetchSettings(), userAgent: nil, longestWait: CurlSocketDriver.defaultLongestWait, bodyMemory: 512 << 10)
        defer { fetcher.shutdown() }
        let outcomes = FetchOutcomes()
        let liar = try CoverURL(validating: server.url("fault/lying-length?announce=\(1 << 20)&bytes=1024"))
        fetcher.fetch(FetchID(1), url: liar) { outcome in
            if case .success(let body) = outcome { fetcher.bodyConsumed(bytes: body.bytes.count) }
            outcomes.record(FetchID(1), outcome)
        }
        try waitUntil("the short body") { outcomes.all.count == 1 }

        // When
        fetcher.fetch(FetchID(2), url: try CoverURL(validating: server.url("next.bin"))) { outcomes.record(FetchID(2), $0) }

        // Then
        try waitUntil("the next cover") { outcomes.all.count == 2 }
        guard case .success(let short)? = outcomes[FetchID(1)], case .success(let next)? = outcomes[FetchID(2)] else {
            Issue.record("\(String(describing: outcomes[FetchID(1)])), \(String(describing: outcomes[FetchID(2)]))")
            return
        }
        #expect(short.bytes.count == 1_024)
        #expect(short.bytes.capacity < 4_096, "not the 1 MiB announced: what is held is what the budget counts")
        #expect(next.bytes.count == 4_096)
        #expect(try snapshot(of: fetcher).held == 4_096, "only the unconsumed next cover is held")
    }

    /// The budget as the transfer thread sees it, asked between two turns of its loop.
    private func snapshot(of fetcher: CurlFetcher) throws -> BodyBudget.Snapshot {
        let answer = Mutex<BodyBudget.Snapshot?>(nil)
        let answered = DispatchSemaphore(value: 0)
        fetcher.inspectBudget { snapshot in
            answer.withLock { $0 = snapshot }
            answered.signal()
        }
        guard answered.wait(timeout: .now() + 10) == .success, let snapshot = answer.withLock({ $0 }) else {
            throw BudgetNotAnswered()
        }
        return snapshot
    }

    private struct BudgetNotAnswered: Error {}
}
