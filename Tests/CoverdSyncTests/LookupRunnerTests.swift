@testable import CoverdFetch
import CoverdLookup
import CoverdModel
import CoverdTestSupport
import Foundation
import Synchronization
import Testing

@testable import CoverdSync

/// A gate lookups wait at until the test opens it; a cancelled task leaves it at once.
private final class Gate: Sendable {
    private struct State {
        var open = false
        var numbered = 0
        var waiting: [Int: CheckedContinuation<Void, Never>] = [:]
    }

    private let state = Mutex(State())

    var waiting: Int { state.withLock { $0.waiting.count } }

    func open() {
        let released = state.withLock { state in
            state.open = true
            defer { state.waiting = [:] }
            return Array(state.waiting.values)
        }
        released.forEach { $0.resume() }
    }

    /// Returns once the gate is open, or at once when the task is cancelled.
    func pass() async {
        let number = state.withLock { state in
            state.numbered += 1
            return state.numbered
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let wait = state.withLock { state in
                    guard !state.open, !Task.isCancelled else { return false }
                    state.waiting[number] = continuation
                    return true
                }
                if !wait { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiting.removeValue(forKey: number) }?.resume()
        }
    }
}

/// A finder whose parts wait at gates, counting how many run at once. An
/// album titled "miss" has nothing at the archive; others are found there.
private final class GatedFinder: CoverFinding {
    private struct Counts {
        var archive = 0, archiveMost = 0, musicBrainz = 0, musicBrainzMost = 0
        var asked: [String] = []
    }

    let archiveGate = Gate()
    let musicBrainzGate = Gate()
    private let counts = Mutex(Counts())

    var archiveMost: Int { counts.withLock { $0.archiveMost } }
    var musicBrainzMost: Int { counts.withLock { $0.musicBrainzMost } }
    var musicBrainzNow: Int { counts.withLock { $0.musicBrainz } }
    var asked: [String] { counts.withLock { $0.asked } }

    func atArchive(_ request: LookupRequest) async -> LookupStep {
        guard request.releaseID != nil else {
            return .needsMusicBrainz(PendingLookup(request: request, settings: LookupSettings(), tried: []))
        }
        counts.withLock { counts in
            counts.archive += 1
            counts.archiveMost = max(counts.archiveMost, counts.archive)
            counts.asked.append(request.artist)
        }
        await archiveGate.pass()
        counts.withLock { $0.archive -= 1 }
        // A real archive part ends cancelled; a "miss" hands on regardless, for the runner to stop.
        if Task.isCancelled, request.title != "miss" { return .ended(.failed(FetchFailure(kind: .cancelled, message: "cancelled"))) }
        if request.title == "miss" { return .needsMusicBrainz(PendingLookup(request: request, settings: LookupSettings(), tried: [])) }
        return .ended(.notFound("no cover found: found at the archive, in this fake"))
    }

    func withMusicBrainz(_ pending: PendingLookup) async -> LookupOutcome {
        counts.withLock { counts in
            counts.musicBrainz += 1
            counts.musicBrainzMost = max(counts.musicBrainzMost, counts.musicBrainz)
        }
        await musicBrainzGate.pass()
        counts.withLock { $0.musicBrainz -= 1 }
        if Task.isCancelled { return .failed(FetchFailure(kind: .cancelled, message: "cancelled")) }
        return .notFound("no cover found: asked MusicBrainz, in this fake")
    }
}

/// Every delivery, by lookup.
private final class Deliveries: Sendable {
    private let outcomes = Mutex<[FetchID: [LookupOutcome]]>([:])

    func deliver(_ id: FetchID) -> @Sendable (LookupOutcome) -> Void {
        { outcome in self.outcomes.withLock { $0[id, default: []].append(outcome) } }
    }

    var count: Int { outcomes.withLock { $0.values.reduce(0) { $0 + $1.count } } }
    subscript(_ id: FetchID) -> [LookupOutcome] { outcomes.withLock { $0[id] ?? [] } }

    func isCancelled(_ id: FetchID) -> Bool {
        let delivered = self[id]
        guard delivered.count == 1, case .failed(let failure) = delivered[0] else { return false }
        return failure.kind == .cancelled
    }
}

private func request(_ number: Int, withID: Bool = true, title: String = "T") -> LookupRequest {
    let id = withID ? MusicBrainzID(String(format: "00000000-0000-4000-8000-%012x", number)) : nil
    return LookupRequest(releaseID: id, releaseGroupID: nil, artist: "artist \(number)", title: title)
}

@Suite("Lookup runner", .timeLimit(.minutes(1)))
struct LookupRunnerTests {
    @Test("Given a closed runner, when a lookup starts, then it is delivered cancelled before start returns")
    func startAfterCloseEndsAtOnce() {
        let runner = LookupRunner(finder: GatedFinder())
        let deliveries = Deliveries()
        runner.cancelAll()

        // When
        runner.start(FetchID(1), request(1), deliver: deliveries.deliver(FetchID(1)))

        // Then
        #expect(deliveries.isCancelled(FetchID(1)))
        runner.waitUntilIdle()
    }

    @Test("Given 10,000 lookups, most of them queued, when all are cancelled, then each is delivered once, cancelled, and the runner is idle")
    func cancelAllWithThousandsQueued() async {
        let finder = GatedFinder()
        let runner = LookupRunner(finder: finder)
        let deliveries = Deliveries()
        for number in 0..<10_000 {
            runner.start(FetchID(UInt64(number)), request(number), deliver: deliveries.deliver(FetchID(UInt64(number))))
        }
        #expect(await eventually { finder.archiveGate.waiting == LookupRunner.Lane.archive.width })

        // When
        runner.cancelAll()
        await blocking { runner.waitUntilIdle() }

        // Then
        #expect(deliveries.count == 10_000)
        #expect((0..<10_000).allSatisfy { deliveries.isCancelled(FetchID(UInt64($0))) })
        #expect(runner.runningCount(.archive) == 0 && runner.runningCount(.musicBrainz) == 0)
    }

    @Test("Given a lookup queued behind a full lane, when cancelled, then it is delivered once, cancelled, and never runs")
    func cancelledWhileQueuedNeverRuns() async {
        let finder = GatedFinder()
        let runner = LookupRunner(finder: finder)
        let deliveries = Deliveries()
        let width = LookupRunner.Lane.archive.width
        for number in 0...width {
            runner.start(FetchID(UInt64(number)), request(number), deliver: deliveries.deliver(FetchID(UInt64(number))))
        }
        #expect(await eventually { finder.archiveGate.waiting == width })

        // When
        #expect(runner.cancel(FetchID(UInt64(width))))

        // Then: delivered at the cancel, before its turn could come
        #expect(deliveries.isCancelled(FetchID(UInt64(width))))
        finder.archiveGate.open()
        #expect(await eventually { deliveries.count == width + 1 })
        #expect(!finder.asked.contains("artist \(width)"))
        await blocking { runner.waitUntilIdle() }
        #expect(deliveries[FetchID(UInt64(width))].count == 1)
    }

    @Test("Given more lookups than either lane's width, when they run, then neither lane runs more than its width and both end empty")
    func lanesKeepTheirWidths() async {
        let finder = GatedFinder()
        let runner = LookupRunner(finder: finder)
        let deliveries = Deliveries()
        for number in 0..<200 {
            runner.start(FetchID(UInt64(number)), request(number), deliver: deliveries.deliver(FetchID(UInt64(number))))
        }
        for number in 200..<220 {
            runner.start(FetchID(UInt64(number)), request(number, withID: false), deliver: deliveries.deliver(FetchID(UInt64(number))))
        }
        #expect(await eventually { finder.archiveGate.waiting == 64 && finder.musicBrainzGate.waiting == 4 })

        // When
        finder.archiveGate.open()
        finder.musicBrainzGate.open()

        // Then
        #expect(await eventually { deliveries.count == 220 })
        #expect(finder.archiveMost == LookupRunner.Lane.archive.width)
        #expect(finder.musicBrainzMost == LookupRunner.Lane.musicBrainz.width)
        #expect(runner.runningCount(.archive) == 0 && runner.runningCount(.musicBrainz) == 0)
    }

    @Test("Given a full lane of albums the archive had nothing for, all waiting for MusicBrainz, when another album with an id comes, then the archive is asked for it at once")
    func waitingForMusicBrainzHoldsNoArchiveSlot() async {
        let finder = GatedFinder()
        finder.archiveGate.open()
        let runner = LookupRunner(finder: finder)
        let deliveries = Deliveries()
        let width = LookupRunner.Lane.archive.width
        for number in 0..<width {
            runner.start(FetchID(UInt64(number)), request(number, title: "miss"), deliver: deliveries.deliver(FetchID(UInt64(number))))
        }
        #expect(await eventually { finder.musicBrainzGate.waiting == LookupRunner.Lane.musicBrainz.width })

        // When
        runner.start(FetchID(1_000), request(1_000), deliver: deliveries.deliver(FetchID(1_000)))

        // Then
        #expect(await eventually { deliveries[FetchID(1_000)].count == 1 })
        #expect(finder.musicBrainzNow == LookupRunner.Lane.musicBrainz.width)
        runner.cancelAll()
        await blocking { runner.waitUntilIdle() }
        #expect(deliveries.count == width + 1)
    }

    @Test("Given a lookup whose archive part found nothing, when it is cancelled as it hands on to MusicBrainz, then it is delivered cancelled and MusicBrainz is never asked")
    func cancelledBetweenItsParts() async {
        let finder = GatedFinder()
        let runner = LookupRunner(finder: finder)
        let deliveries = Deliveries()
        runner.start(FetchID(1), request(1, title: "miss"), deliver: deliveries.deliver(FetchID(1)))
        #expect(await eventually { finder.archiveGate.waiting == 1 })

        // When
        #expect(runner.cancel(FetchID(1)))

        // Then
        #expect(await eventually { deliveries.count == 1 })
        #expect(deliveries.isCancelled(FetchID(1)))
        #expect(finder.musicBrainzMost == 0)
        await blocking { runner.waitUntilIdle() }
    }

    @Test("Given a lookup queued in the MusicBrainz lane behind a full one, when cancelled, then it is delivered once, cancelled, and its MusicBrainz part never runs")
    func cancelledWhileQueuedForMusicBrainz() async {
        let finder = GatedFinder()
        finder.archiveGate.open()
        let runner = LookupRunner(finder: finder)
        let deliveries = Deliveries()
        let width = LookupRunner.Lane.musicBrainz.width
        for number in 0...width {
            runner.start(FetchID(UInt64(number)), request(number, title: "miss"), deliver: deliveries.deliver(FetchID(UInt64(number))))
        }
        #expect(await eventually { finder.musicBrainzGate.waiting == width && runner.runningCount(.archive) == 0 })

        // When
        #expect(runner.cancel(FetchID(UInt64(width))))

        // Then
        #expect(deliveries.isCancelled(FetchID(UInt64(width))))
        finder.musicBrainzGate.open()
        #expect(await eventually { deliveries.count == width + 1 })
        #expect(finder.musicBrainzMost == width)
        await blocking { runner.waitUntilIdle() }
        #expect(deliveries[FetchID(UInt64(width))].count == 1)
    }
}
