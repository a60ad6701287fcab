@testable import CoverdBase
@testable import CoverdModel
@testable import CoverdSync
import CoverdTestSupport
import Dispatch
import Foundation
import Synchronization
import Testing

/// `SyncProgress` posts: at once when nothing is pending, coalesced while covers are.
@Suite("Progress posts")
struct ProgressThrottleTests {
    let bus = EventBus()
    let queue = DispatchQueue(label: "test.coordinator")
    let observer = DispatchQueue(label: "test.observer")
    let posted = Posted()

    /// The summaries posted, in order.
    final class Posted: Sendable {
        private let summaries = Mutex<[SyncSummary]>([])
        func append(_ summary: SyncSummary) { summaries.withLock { $0.append(summary) } }
        var all: [SyncSummary] { summaries.withLock { $0 } }
    }

    /// Observes `SyncProgress` into `posted`; cancel the token at the end.
    func observe() -> ObservationToken {
        bus.observe(SyncProgress.self, on: observer) { [posted] message in posted.append(message.summary) }
    }

    func pending(_ count: Int) -> SyncSummary { SyncSummary(albums: 10, cached: 10 - count, pending: count, failed: 0) }

    /// Offers `summaries` one after another on the coordinator's queue, with
    /// `interval` between posts, and returns what was posted once `count` posts came.
    func posts(offering summaries: [SyncSummary], interval: Duration, until count: Int) throws -> [SyncSummary] {
        let token = observe()
        defer { token.cancel() }
        let throttle = ProgressThrottle(bus: bus, queue: queue, interval: interval)
        defer { throttle.cancel() }
        queue.sync { summaries.forEach(throttle.offer) }
        try waitUntil("\(count) posts") { posted.all.count == count }
        queue.sync {}
        observer.sync {}
        return posted.all
    }

    @Test("Given summaries offered in quick succession while covers are pending, when the interval passes, then the first is posted at once and only the latest after it")
    func coalescedWhilePending() throws {
        // Given: an interval long enough that the three offers fall inside it
        // When
        let posted = try posts(offering: [pending(5), pending(4), pending(3)], interval: .milliseconds(300), until: 2)
        // Then
        #expect(posted == [pending(5), pending(3)])
    }

    @Test("Given a summary with nothing pending, when offered right after another post, then it is posted at once, and an unchanged one not at all")
    func nothingPendingPostsAtOnce() throws {
        // Given: an hour between posts, so no timer can be what posts the second
        // When
        let posted = try posts(offering: [pending(1), pending(0), pending(0)], interval: .seconds(3600), until: 2)
        // Then
        #expect(posted == [pending(1), pending(0)])
    }

    @Test("Given summaries offered in quick succession during a revalidation pass (nothing pending, covers being asked again), when the interval passes, then they are coalesced as while covers are pending")
    func coalescedWhileRevalidating() throws {
        func revalidating(outdated: Int) -> SyncSummary {
            var summary = SyncSummary(albums: 10, cached: 10, pending: 0, failed: 0, outdated: outdated)
            summary.revalidating = 2
            return summary
        }
        let posted = try posts(offering: [revalidating(outdated: 9), revalidating(outdated: 8), revalidating(outdated: 7)], interval: .milliseconds(300), until: 2)
        #expect(posted == [revalidating(outdated: 9), revalidating(outdated: 7)])
    }
}
