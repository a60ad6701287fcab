@testable import CoverdBase
@testable import CoverdFetch
@testable import CoverdModel
import CoverdTestSupport
import Foundation
import Synchronization
import Testing

/// Outcomes by fetch, as the transfer thread reports them: every one, so a
/// fetch completed twice (which would crash an awaiting continuation) shows.
final class FetchOutcomes: Sendable {
    private let results = Mutex<[FetchID: [FetchOutcome]]>([:])

    /// Records the outcome and, as the daemon does once a body is stored, tells `fetcher` a body was consumed
    /// (the fetcher starts no more transfers while too many bodies wait).
    func completion(_ id: FetchID, consumedBy fetcher: CurlFetcher) -> @Sendable (FetchOutcome) -> Void {
        { [self] outcome in
            results.withLock { $0[id, default: []].append(outcome) }
            if case .success(let body) = outcome { fetcher.bodyConsumed(bytes: body.bytes.count) }
        }
    }

    /// Records an outcome without consuming its body: the test decides when.
    func record(_ id: FetchID, _ outcome: FetchOutcome) {
        results.withLock { $0[id, default: []].append(outcome) }
    }

    /// Records the outcome of an answer, which holds no body budget to give back.
    func answerCompletion(_ id: FetchID) -> @Sendable (FetchOutcome) -> Void {
        { [self] outcome in results.withLock { $0[id, default: []].append(outcome) } }
    }

    var all: [FetchID: FetchOutcome] { results.withLock { $0.compactMapValues(\.first) } }
    subscript(_ id: FetchID) -> FetchOutcome? { all[id] }
    /// How many times `id` was completed: exactly once, always.
    func completions(_ id: FetchID) -> Int { results.withLock { $0[id]?.count ?? 0 } }
}

/// The fetcher against a real local HTTP server: the socket events and
/// libcurl's timers that drive `CurlSocketDriver`.
@Suite("Curl fetcher", .serialized)
struct CurlFetcherTests {
    @Test("Given more covers than transfers at once, when fetched, then each arrives whole")
    func manyCoversOverFewConnections() throws {
        // Given: 40 covers of different sizes, at most 4 transfers at once
        let directory = TestDirectory()
        let server = try CoverServer(root: directory.sub("www"))
        var expected: [FetchID: [UInt8]] = [:]
        for index in 0..<40 {
            let png = PNGFixture.make(width: 8 + index * 7, height: 8 + index * 3, seed: index + 1)
            try server.serve(png, at: "c\(index).png")
            expected[FetchID(UInt64(index))] = png
        }
        var settings = FetchSettings()
        settings.concurrency = 4
        settings.perHost = 4
        let fetcher = try CurlFetcher(settings: settings)
        defer { fetcher.shutdown() }
        let outcomes = FetchOutcomes()

        // When
        for index in 0..<40 {
            let id = FetchID(UInt64(index))
            fetcher.fetch(id, url: try CoverURL(validating: server.url("c\(index).png")), completion: outcomes.completion(id, consumedBy: fetcher))
        }

        // Then
        try waitUntil("all 40 outcomes") { outcomes.all.count == 40 }
        #expect(try server.requests().maxInFlight <= 4)
        for (id, bytes) in expected {
            guard case .success(let body)? = outcomes[id] else {
                Issue.record("\(id): \(String(describing: outcomes[id]))")
                continue
            }
            #expect(body.bytes == bytes, "\(id)")
            #expect(body.httpStatus == 200)
        }
    }

    @Test("Given a server that never answers and no low-speed limit, when fetched, then libcurl's timer alone ends the transfer at the total timeout")
    func timerAloneEndsASilentTransfer() throws {
        // Given: no socket event will ever come; only the total timeout's timer can end it
        let directory = TestDirectory()
        let server = try CoverServer(root: directory.sub("www"))
        var settings = FetchSettings()
        settings.lowSpeedLimit = 0
        settings.totalTimeout = .milliseconds(1500)
        // No wait of the loop's own ends before an hour: only libcurl's timer can end this one.
        let fetcher = try CurlFetcher(settings: settings, userAgent: "coverd-test", longestWait: .seconds(3600))
        defer { fetcher.shutdown() }
        let outcomes = FetchOutcomes()
        let id = FetchID(1)
        let started = ContinuousClock.now

        // When
        fetcher.fetch(id, url: try CoverURL(validating: server.url("fault/silent")), completion: outcomes.completion(id, consumedBy: fetcher))

        // Then
        try waitUntil("the timeout", timeout: 30) { outcomes[id] != nil }
        let elapsed = ContinuousClock.now - started
        guard case .failure(let failure)? = outcomes[id] else {
            Issue.record("expected a timeout, got \(String(describing: outcomes[id]))")
            return
        }
        #expect(failure.kind == .timeout, "\(failure.message)")
        #expect(elapsed >= .milliseconds(1500))
    }

    @Test("Given a transfer in progress, when cancelled, then it ends as cancelled and the next fetch still succeeds")
    func cancelThenFetchAgain() throws {
        // Given
        let directory = TestDirectory()
        let server = try CoverServer(root: directory.sub("www"))
        let png = PNGFixture.make(width: 32, height: 32, seed: 7)
        try server.serve(png, at: "ok.png")
        let fetcher = try CurlFetcher(settings: FetchSettings())
        defer { fetcher.shutdown() }
        let outcomes = FetchOutcomes()
        fetcher.fetch(FetchID(1), url: try CoverURL(validating: server.url("fault/silent")), completion: outcomes.completion(FetchID(1), consumedBy: fetcher))
        try waitUntil("the request to reach the server") { try server.requests().inFlight == 1 }

        // When: cancelled while its transfer runs (not while it waits for a slot)
        fetcher.cancel(FetchID(1))
        fetcher.fetch(FetchID(2), url: try CoverURL(validating: server.url("ok.png")), completion: outcomes.completion(FetchID(2), consumedBy: fetcher))

        // Then
        try waitUntil("both outcomes") { outcomes.all.count == 2 }
        guard case .failure(let cancelled)? = outcomes[FetchID(1)] else {
            Issue.record("expected a cancellation, got \(String(describing: outcomes[FetchID(1)]))")
            return
        }
        #expect(cancelled.kind == .cancelled)
        guard case .success(let body)? = outcomes[FetchID(2)] else {
            Issue.record("expected the cover, got \(String(describing: outcomes[FetchID(2)]))")
            return
        }
        #expect(body.bytes == png)
    }

    @Test("Given every cover slot held by a silent transfer, when an answer is asked of another origin, then it starts and completes at once")
    func answersDoNotWaitBehindCovers() throws {
        // Given: one transfer at once, taken by a cover that never ends
        let directory = TestDirectory()
        let covers = try CoverServer(root: directory.sub("covers"))
        let service = try CoverServer(root: directory.sub("service"))
        try service.serve(Array(#"{"ok": true}"#.utf8), at: "answer.json")
        var settings = FetchSettings()
        settings.concurrency = 1
        settings.perHost = 1
        let fetcher = try CurlFetcher(settings: settings)
        defer { fetcher.shutdown() }
        let outcomes = FetchOutcomes()
        fetcher.fetch(FetchID(1), url: try CoverURL(validating: covers.url("fault/silent")), completion: outcomes.completion(FetchID(1), consumedBy: fetcher))
        try waitUntil("the cover to hold its slot") { try covers.requests().inFlight == 1 }

        // When
        fetcher.fetch(FetchID(2), url: try CoverURL(validating: service.url("answer.json")), purpose: .answer(limit: 1024), completion: outcomes.answerCompletion(FetchID(2)))

        // Then
        try waitUntil("the answer") { outcomes[FetchID(2)] != nil }
        guard case .success(let body)? = outcomes[FetchID(2)] else {
            Issue.record("expected the answer, got \(String(describing: outcomes[FetchID(2)]))")
            return
        }
        #expect(body.bytes == Array(#"{"ok": true}"#.utf8))
        #expect(outcomes[FetchID(1)] == nil, "the cover still holds its slot")
    }

    @Test("Given more answers than the body budget, none given back, when a cover is fetched, then it still starts: answers hold no budget")
    func answersHoldNoBodyBudget() throws {
        let directory = TestDirectory()
        let server = try CoverServer(root: directory.sub("www"))
        let png = PNGFixture.make(width: 16, height: 16, seed: 3)
        try server.serve(png, at: "c.png")
        try server.serve(Array("{}".utf8), at: "answer.json")
        var settings = FetchSettings()
        settings.concurrency = 1
        let fetcher = try CurlFetcher(settings: settings)
        defer { fetcher.shutdown() }
        let answered = Mutex(0)
        let cover = Mutex<FetchOutcome?>(nil)

        // When: answers one after another (their callers take one at a time), their bodies never given back
        for number in 0..<20 {
            fetcher.fetch(FetchID(UInt64(number)), url: try CoverURL(validating: server.url("answer.json")), purpose: .answer(limit: 64)) { outcome in
                if case .success = outcome { answered.withLock { $0 += 1 } }
            }
            try waitUntil("answer \(number)") { answered.withLock { $0 } == number + 1 }
        }
        fetcher.fetch(FetchID(100), url: try CoverURL(validating: server.url("c.png"))) { outcome in cover.withLock { $0 = outcome } }

        // Then
        try waitUntil("the cover") { cover.withLock { $0 } != nil }
        guard case .success(let body)? = cover.withLock({ $0 }) else {
            Issue.record("expected the cover, got \(String(describing: cover.withLock { $0 }))")
            return
        }
        #expect(body.bytes == png)
    }

    @Test("Given a cover waiting for a slot, when cancelled, then it is completed as cancelled at once, not at its turn")
    func cancelledWhileWaitingEndsAtOnce() throws {
        let directory = TestDirectory()
        let server = try CoverServer(root: directory.sub("www"))
        var settings = FetchSettings()
        settings.concurrency = 1
        settings.perHost = 1
        let fetcher = try CurlFetcher(settings: settings)
        defer { fetcher.shutdown() }
        let outcomes = FetchOutcomes()
        fetcher.fetch(FetchID(1), url: try CoverURL(validating: server.url("fault/silent")), completion: outcomes.completion(FetchID(1), consumedBy: fetcher))
        fetcher.fetch(FetchID(2), url: try CoverURL(validating: server.url("fault/silent")), completion: outcomes.completion(FetchID(2), consumedBy: fetcher))
        try waitUntil("the first to hold the slot") { try server.requests().inFlight == 1 }

        // When
        fetcher.cancel(FetchID(2))

        // Then
        try waitUntil("the waiting one's outcome") { outcomes[FetchID(2)] != nil }
        guard case .failure(let failure)? = outcomes[FetchID(2)] else {
            Issue.record("expected a cancellation, got \(String(describing: outcomes[FetchID(2)]))")
            return
        }
        #expect(failure.kind == .cancelled)
        #expect(outcomes[FetchID(1)] == nil, "the first still runs")
        // The cancelled one's place in the queue comes round once the first ends: it is not completed again.
        fetcher.cancel(FetchID(1))
        try waitUntil("the first's outcome") { outcomes[FetchID(1)] != nil }
        fetcher.fetch(FetchID(3), url: try CoverURL(validating: server.url("fault/silent")), completion: outcomes.completion(FetchID(3), consumedBy: fetcher))
        try waitUntil("the third to reach the server, the cancelled second never having gone") { try server.requests().total == 2 }
        #expect(outcomes.completions(FetchID(2)) == 1)
        #expect(outcomes.completions(FetchID(1)) == 1)
    }

    @Test("Given more answers than their room, when one waiting is cancelled and then the fetcher shuts down, then each answer is completed exactly once")
    func answersBeyondTheirRoom() throws {
        let directory = TestDirectory()
        let server = try CoverServer(root: directory.sub("www"))
        let fetcher = try CurlFetcher(settings: FetchSettings())
        let outcomes = FetchOutcomes()
        let count = TransferLoop.answerRoom + 2
        for number in 1...count {
            let id = FetchID(UInt64(number))
            fetcher.fetch(id, url: try CoverURL(validating: server.url("fault/silent")), purpose: .answer(limit: 64), completion: outcomes.answerCompletion(id))
        }
        try waitUntil("the answers with room to start") { try server.requests().inFlight == TransferLoop.answerRoom }

        // When
        fetcher.cancel(FetchID(UInt64(count)))
        try waitUntil("the cancelled one's outcome") { outcomes[FetchID(UInt64(count))] != nil }
        fetcher.shutdown()

        // Then
        #expect(try server.requests().inFlight <= TransferLoop.answerRoom)
        for number in 1...count {
            #expect(outcomes.completions(FetchID(UInt64(number))) == 1, "answer \(number)")
            guard case .failure(let failure)? = outcomes[FetchID(UInt64(number))] else {
                Issue.record("answer \(number): \(String(describing: outcomes[FetchID(UInt64(number))]))")
                continue
            }
            #expect(failure.kind == .cancelled)
        }
    }

    @Test("Given commands queued before the loop drains, when counted on the eventfd, then they woke it once, and a command after the drain wakes it again")
    func inboxCoalescesWakeUps() throws {
        // Given
        let inbox = try TransferInbox()
        func signals() -> UInt64 {
            var value: UInt64 = 0
            let count = withUnsafeMutableBytes(of: &value) { read(inbox.wake.descriptor, $0.baseAddress, 8) }
            return count == 8 ? value : 0  // EAGAIN: not signalled since the last read
        }
        for _ in 0..<5 { inbox.send(.bodyConsumed(bytes: 1)) }

        // When
        let first = signals()
        let drained = inbox.drain()
        inbox.send(.bodyConsumed(bytes: 1))

        // Then
        #expect(first == 1)
        #expect(drained.count == 5)
        #expect(signals() == 1)
        #expect(inbox.drain().count == 1)
        #expect(signals() == 0)
    }
}
