@testable import CoverdFetch
@testable import CoverdLookup
import CoverdBase
import CoverdModel
import CoverdTestSupport
import Foundation
import Synchronization
import Testing

/// A fetcher that answers from a script, one outcome per request in order;
/// `.hang` holds a request until it is cancelled. Records every start and cancel.
private final class ScriptedFetcher: CoverFetching {
    enum Step: Sendable {
        case answer(FetchOutcome)
        case hang
    }

    private struct State {
        var script: [Step]
        var held: [FetchID: @Sendable (FetchOutcome) -> Void] = [:]
        var events: [String] = []
    }

    private let state: Mutex<State>

    init(_ script: [Step]) {
        state = Mutex(State(script: script))
    }

    var events: [String] { state.withLock { $0.events } }
    var requests: Int { state.withLock { $0.events.count { $0.hasPrefix("start") } } }

    func fetch(_ id: FetchID, url: CoverURL, purpose: FetchPurpose, completion: @escaping @Sendable (FetchOutcome) -> Void) {
        let step: Step? = state.withLock { state in
            state.events.append("start \(id.rawValue)")
            guard !state.script.isEmpty else { return nil }
            let step = state.script.removeFirst()
            if case .hang = step { state.held[id] = completion }
            return step
        }
        switch step {
        case .answer(let outcome)?: completion(outcome)
        case .hang?: break
        case nil: completion(.failure(FetchFailure(kind: .other, message: "nothing scripted")))
        }
    }

    func cancel(_ id: FetchID) {
        let held = state.withLock { state in
            state.events.append("cancel \(id.rawValue)")
            return state.held.removeValue(forKey: id)
        }
        held?(.failure(FetchFailure(kind: .cancelled, message: "cancelled")))
    }

    func bodyConsumed(bytes: Int) {}
    func apply(_ settings: FetchSettings) throws(SystemError) -> [String] { [] }
    func shutdown() {}
}

private func refused(retryAfter: Duration? = nil) -> ScriptedFetcher.Step {
    .answer(.failure(FetchFailure(kind: .http(503), message: "HTTP 503", httpStatus: 503, retryAfter: retryAfter)))
}

private func notFound() -> ScriptedFetcher.Step {
    .answer(.failure(FetchFailure(kind: .http(404), message: "HTTP 404", httpStatus: 404)))
}


@Suite("MusicBrainz client: what it tells the pacer")
struct MusicBrainzClientTests {
    let release: MusicBrainzID

    init() throws {
        release = try #require(MusicBrainzID("0d1e0a53-4a8c-4c55-9e6d-5b6b54c4e6e4"))
    }

    fileprivate func client(_ fetcher: ScriptedFetcher) -> (MusicBrainzClient, RatePacer) {
        let pacer = RatePacer(interval: .milliseconds(10))
        return (MusicBrainzClient(fetcher: AwaitedFetcher(fetcher: fetcher), pacer: pacer), pacer)
    }

    @Test("Given two 503s without Retry-After, then every request waits a second after the first and two after the second; an answer between starts again at a second")
    func refusalsInARowBackOffAndAnAnswerResets() async throws {
        let fetcher = ScriptedFetcher([refused(), refused(), notFound(), refused()])
        let (client, pacer) = client(fetcher)

        // When / Then: each pause as it stands right after its refusal came back
        func pauseAfterNextRequest() async -> Duration {
            _ = await client.releaseGroup(ofRelease: release, base: "http://mb.test")
            let returned = ContinuousClock.now
            return await pacer.nextTurn - returned
        }
        var pause = await pauseAfterNextRequest()
        #expect(pause > .milliseconds(500) && pause <= .seconds(1), "\(pause)")
        pause = await pauseAfterNextRequest()
        #expect(pause > .milliseconds(1500) && pause <= .seconds(2), "\(pause)")
        let answered = await client.releaseGroup(ofRelease: release, base: "http://mb.test")
        #expect((try? answered.get()) == .some(nil), "a 404 is MusicBrainz knowing no such release")
        pause = await pauseAfterNextRequest()
        #expect(pause > .milliseconds(500) && pause <= .seconds(1), "after an answer, a refusal pauses a second again: \(pause)")
    }

    @Test("Given a request holding the turn that never answers, when its task is cancelled, then the next request still gets a turn")
    func cancelledRequestGivesTheTurnBack() async throws {
        let fetcher = ScriptedFetcher([.hang, notFound()])
        let (client, _) = client(fetcher)
        let first = Task { [release] in await client.releaseGroup(ofRelease: release, base: "http://mb.test") }
        #expect(await eventually { fetcher.requests == 1 })

        // When
        first.cancel()
        let outcome = await first.value

        // Then
        guard case .failure(let failure) = outcome else { Issue.record("expected a cancellation"); return }
        #expect(failure.kind == .cancelled)
        let next = await client.releaseGroup(ofRelease: release, base: "http://mb.test")
        #expect((try? next.get()) == .some(nil))
    }
}

/// A fetcher whose `fetch` finds its task cancelled: the cancellation handler
/// runs before the fetch is recorded, as when a cancel races the start.
private final class CancellingFetcher: CoverFetching {
    let events = Mutex<[String]>([])

    func fetch(_ id: FetchID, url: CoverURL, purpose: FetchPurpose, completion: @escaping @Sendable (FetchOutcome) -> Void) {
        withUnsafeCurrentTask { $0?.cancel() }
        events.withLock { $0.append("start") }
        // Completed only by a cancel that comes after the start, as the transfer thread would.
        self.completion.withLock { $0 = completion }
    }

    let completion = Mutex<(@Sendable (FetchOutcome) -> Void)?>(nil)

    func cancel(_ id: FetchID) {
        events.withLock { $0.append("cancel") }
        completion.withLock { held in defer { held = nil }; return held }?(.failure(FetchFailure(kind: .cancelled, message: "cancelled")))
    }

    func bodyConsumed(bytes: Int) {}
    func apply(_ settings: FetchSettings) throws(SystemError) -> [String] { [] }
    func shutdown() {}
}

@Suite("Awaited fetcher")
struct AwaitedFetcherTests {
    @Test("Given a task cancelled while its fetch is being queued, then a cancel follows the start, and the fetch ends cancelled")
    func cancelThatRacesTheStartIsSentAgain() async throws {
        let fetcher = CancellingFetcher()
        let awaited = AwaitedFetcher(fetcher: fetcher)

        // When
        let url = try CoverURL(validating: "http://caa.test/front")
        let outcome = await Task { await awaited.get(url) }.value

        // Then
        guard case .failure(let failure) = outcome else { Issue.record("expected a cancellation"); return }
        #expect(failure.kind == .cancelled)
        let events = fetcher.events.withLock { $0 }
        #expect(events.last == "cancel" && events.contains("start"), "\(events)")
    }
}
