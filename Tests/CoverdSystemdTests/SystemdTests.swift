@testable import CoverdBase
@testable import CoverdLogging
@testable import CoverdModel
@testable import CoverdSync
@testable import CoverdSystemd
import CoverdTestSupport
import Dispatch
import Logging
import Synchronization
import Testing

/// Records what would have gone to systemd.
final class RecordingNotifier: ReadinessNotifying {
    private let sent = Mutex<[[String: String]]>([])
    let watchdogInterval: Duration?

    init(watchdog: Duration? = nil) {
        watchdogInterval = watchdog
    }

    func notify(_ assignments: [(key: String, value: String)]) -> Int32? {
        sent.withLock { $0.append(Dictionary(assignments, uniquingKeysWith: { $1 })) }
        return nil
    }

    var messages: [[String: String]] { sent.withLock { $0 } }
    func values(_ key: String) -> [String] { messages.compactMap { $0[key] } }
}

/// A work loop that answers probes only while it is not "hung".
final class FakeLoop: LivenessProbing {
    private let hung: Atomic<Bool>
    private let queue = DispatchQueue(label: "fake-loop")

    init(hung: Bool) {
        self.hung = Atomic(hung)
    }

    func probe(_ reply: @escaping @Sendable () -> Void) {
        guard !hung.load(ordering: .relaxed) else { return }
        queue.async(execute: reply)
    }
}

@Suite("systemd integration")
struct SystemdTests {
    /// A reporter observing a bus of its own, started, with what it sends recorded.
    func startedReporter(interval: Duration = .seconds(1)) -> (RecordingNotifier, EventBus, SystemdReporter) {
        let notifier = RecordingNotifier()
        let bus = EventBus()
        let reporter = SystemdReporter(notifier: notifier, bus: bus, interval: interval)
        reporter.start()
        return (notifier, bus, reporter)
    }

    @Test("Given no WATCHDOG_USEC, when a watchdog is made, then there is none")
    func watchdogDisabled() {
        #expect(Watchdog(notifier: RecordingNotifier(), probes: []) == nil)
    }

    @Test("Given loops that answer, when the watchdog ticks, then it pings at half the interval")
    func watchdogPings() throws {
        let notifier = RecordingNotifier(watchdog: .milliseconds(100))
        let watchdog = try #require(Watchdog(notifier: notifier, probes: [FakeLoop(hung: false), FakeLoop(hung: false)]))
        #expect(watchdog.pingPeriod == .milliseconds(50))
        watchdog.start()
        try waitUntil("three pings") { notifier.values("WATCHDOG").count >= 3 }
        watchdog.stop()
    }

    @Test("Given one hung loop, when the watchdog ticks, then it never pings")
    func watchdogCatchesHungLoop() throws {
        let notifier = RecordingNotifier(watchdog: .milliseconds(40))
        let hung = FakeLoop(hung: true)
        let healthy = FakeLoop(hung: false)
        let watchdog = try #require(Watchdog(notifier: notifier, probes: [healthy, hung]))
        watchdog.start()
        // A healthy watchdog in parallel proves ticks happen meanwhile.
        let control = RecordingNotifier(watchdog: .milliseconds(40))
        let controlDog = try #require(Watchdog(notifier: control, probes: [healthy]))
        controlDog.start()
        try waitUntil("the control watchdog's fifth ping") { control.values("WATCHDOG").count >= 5 }
        #expect(notifier.values("WATCHDOG").isEmpty)
        watchdog.stop()
        controlDog.stop()
    }

    @Test("Given a burst of progress while busy, when reported, then STATUS= is coalesced and the settled state goes out at once")
    func statusCoalescing() throws {
        let (notifier, bus, reporter) = startedReporter(interval: .seconds(30))
        bus.post(LifecycleChanged(.ready))
        for cached in 0..<200 {
            bus.post(SyncProgress(summary: SyncSummary(albums: 201, cached: cached, pending: 201 - cached, failed: 0)))
        }
        bus.post(SyncProgress(summary: SyncSummary(albums: 201, cached: 200, pending: 0, failed: 1)))
        reporter.flush()
        let statuses = notifier.values("STATUS")
        #expect(statuses.count <= 3, "\(statuses)")
        #expect(statuses.last == "201 albums: 200 cached, 0 pending, 1 failed")
        #expect(notifier.values("READY") == ["1"])
    }

    @Test("Given the lifecycle, when reported, then RELOADING carries MONOTONIC_USEC and STOPPING is sent")
    func lifecycle() throws {
        let (notifier, bus, reporter) = startedReporter()
        bus.post(LifecycleChanged(.reloading))
        bus.post(LifecycleChanged(.ready))
        bus.post(LifecycleChanged(.stopping))
        reporter.flush()
        let messages = notifier.messages
        #expect(messages[0]["RELOADING"] == "1")
        #expect(UInt64(messages[0]["MONOTONIC_USEC"] ?? "") ?? 0 > 0)
        #expect(messages[1]["READY"] == "1")
        #expect(messages[2]["STOPPING"] == "1")
        #expect(messages[2]["STATUS"] == "0 albums: 0 cached, 0 pending, 0 failed; stopping")
    }

    @Test("Given the check of cached covers still running at READY, when it ends, then STATUS= says so until then and not after")
    func statusWhileCheckingCachedCovers() throws {
        // Given
        let (notifier, bus, reporter) = startedReporter(interval: .seconds(30))
        bus.post(LifecycleChanged(.started))
        bus.post(SyncProgress(summary: SyncSummary(albums: 3, cached: 3)))
        bus.post(CachedCoversCheckStarted(count: 3))
        bus.post(LifecycleChanged(.ready))
        reporter.flush()
        let atReady = notifier.messages.last { $0["READY"] == "1" }
        #expect(atReady?["STATUS"] == "3 albums: 3 cached, 0 pending, 0 failed; checking 3 cached covers")

        // When
        bus.post(SyncProgress(summary: SyncSummary(albums: 3, cached: 2, pending: 1)))
        bus.post(CachedCoversChecked(compared: 3, lost: 1, duration: .milliseconds(5)))
        reporter.flush()

        // Then: the end of the check goes out at once, even with a cover pending and the interval not over
        #expect(notifier.values("STATUS").last == "3 albums: 2 cached, 1 pending, 0 failed")
        bus.post(LifecycleChanged(.stopping))
        reporter.flush()
        #expect(notifier.values("STATUS").last == "3 albums: 2 cached, 1 pending, 0 failed; stopping")
    }

    @Test("Given the check of cached covers running, when a reload comes and then a stop, then each lifecycle note takes the check's place while it lasts")
    func lifecycleNotesOverTheCheck() throws {
        // Given
        let (notifier, bus, reporter) = startedReporter(interval: .seconds(30))
        bus.post(SyncProgress(summary: SyncSummary(albums: 2, cached: 2)))
        bus.post(CachedCoversCheckStarted(count: 2))
        bus.post(LifecycleChanged(.ready))

        // When
        bus.post(LifecycleChanged(.reloading))
        reporter.flush()
        let duringReload = notifier.values("STATUS").last
        bus.post(LifecycleChanged(.ready))
        reporter.flush()
        let afterReload = notifier.values("STATUS").last
        bus.post(LifecycleChanged(.stopping))
        reporter.flush()

        // Then
        #expect(duringReload == "2 albums: 2 cached, 0 pending, 0 failed; reloading")
        #expect(afterReload == "2 albums: 2 cached, 0 pending, 0 failed; checking 2 cached covers")
        #expect(notifier.values("STATUS").last == "2 albums: 2 cached, 0 pending, 0 failed; stopping")
    }

    @Test("Given metadata keys, when mapped to journal fields, then names are valid and prefixed")
    func journalFieldNames() {
        #expect(JournalLogHandler.fieldName(for: "event") == "COVERD_EVENT")
        #expect(JournalLogHandler.fieldName(for: "album_id") == "COVERD_ALBUM_ID")
        #expect(JournalLogHandler.fieldName(for: "duration-ms.x") == "COVERD_DURATION_MS_X")
        #expect(JournalLogHandler.fieldName(for: String(repeating: "a", count: 100))?.count == 64)
        #expect(JournalLogHandler.fieldName(for: "") == nil)
    }

    @Test("Given handler, provider and event metadata with the same keys, when merged by either handler, then the event wins, then the provider")
    func metadataPrecedence() {
        let provider = Logger.MetadataProvider { ["shared": "provider", "both": "provider"] }
        let event = LogEvent(level: .info, message: "m", metadata: ["shared": "event"], source: nil, file: #fileID, function: #function, line: #line)
        var stderr = StderrLogHandler(level: LogLevelSetting(.info))
        var journal = JournalLogHandler(level: LogLevelSetting(.info))
        stderr.metadataProvider = provider
        journal.metadataProvider = provider
        stderr[metadataKey: "shared"] = "handler"
        stderr[metadataKey: "both"] = "handler"
        stderr[metadataKey: "own"] = "handler"
        journal.metadata = stderr.metadata
        let expected: Logger.Metadata = ["shared": "event", "both": "provider", "own": "handler"]
        #expect(stderr.mergedMetadata(event) == expected)
        #expect(journal.mergedMetadata(event) == expected)
    }

    @Test("Given a message or value with a newline or an escape character (a record's file name, say), when written to stderr, then it stays on one line, escaped")
    func stderrLinesCannotBeForged() {
        let name = "evil\n2026-01-01T00:00:00.000Z notice FORGED.json"
        #expect(StderrLogHandler.oneLine("\(name): not valid JSON") == "evil\\n2026-01-01T00:00:00.000Z notice FORGED.json: not valid JSON")
        #expect(StderrLogHandler.oneLine("a\u{1B}[31mb\tc\r") == "a\\x1b[31mb\\tc\\r")
        #expect(StderrLogHandler.oneLine("plain – text") == "plain – text", "other non-ASCII, the en dash (E2 80 93) too, kept")
        #expect(StderrLogHandler.oneLine("a\u{9B}31mb\u{85}c\u{2028}d") == "a\\x9b31mb\\x85c\\u2028d")
        #expect(StderrLogHandler.quoted("x\u{1B}y") == "\"x\\x1by\"")
        #expect(StderrLogHandler.quoted("x\u{85}y") == "\"x\\x85y\"")
        #expect(StderrLogHandler.quoted("plain") == "plain")
        #expect(StderrLogHandler.quoted("a \"b\"\n") == "\"a \\\"b\\\"\\n\"")
    }

    @Test("Given log levels, when mapped, then PRIORITY follows syslog")
    func priorities() {
        #expect(Logger.Level.allCases.map(JournalLogHandler.priority) == [7, 7, 6, 5, 4, 3, 2])
    }
}
