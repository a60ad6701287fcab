@testable import CoverdCore
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

    @Test("Given summaries offered in quick succession while covers are pending, when the interval passes, then the first is posted at once and only the latest after it")
    func coalescedWhilePending() throws {
        // Given: an interval long enough that the three offers fall inside it
        let token = observe()
        defer { token.cancel() }
        let throttle = ProgressThrottle(bus: bus, queue: queue, interval: .milliseconds(300))
        defer { throttle.cancel() }

        // When
        queue.sync {
            throttle.offer(pending(5))
            throttle.offer(pending(4))
            throttle.offer(pending(3))
        }

        // Then
        try waitUntil("the trailing post") { posted.all.count == 2 }
        queue.sync {}
        observer.sync {}
        #expect(posted.all == [pending(5), pending(3)])
    }

    @Test("Given a summary with nothing pending, when offered right after another post, then it is posted at once, and an unchanged one not at all")
    func nothingPendingPostsAtOnce() throws {
        // Given
        let token = observe()
        defer { token.cancel() }
        let throttle = ProgressThrottle(bus: bus, queue: queue, interval: .seconds(3600))
        defer { throttle.cancel() }

        // When
        queue.sync {
            throttle.offer(pending(1))
            throttle.offer(pending(0))
            throttle.offer(pending(0))
        }

        // Then: within an hour's interval, so no timer was needed
        try waitUntil("both posts") { posted.all.count == 2 }
        observer.sync {}
        #expect(posted.all == [pending(1), pending(0)])
    }
}
