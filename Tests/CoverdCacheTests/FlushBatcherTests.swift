@testable import CoverdBase
@testable import CoverdCache
import CoverdTestSupport
import Dispatch
import Foundation
import Synchronization
import Testing

@Suite("Group-committed flushes")
struct FlushBatcherTests {
    @Test("Given a tmpfs or ext4 directory, when a batcher starts, then it group-commits; on /proc it leaves each file to fsync")
    func trustedFilesystems() {
        #expect(FlushBatcher(directory: "/dev/shm").groupCommits, "tmpfs")
        #expect(!FlushBatcher(directory: "/proc").groupCommits, "procfs is not trusted")
        #expect(!FlushBatcher(directory: "/nonexistent-\(UInt64.random(in: 0...UInt64.max))").groupCommits, "unknown: per-file fsync")
    }

    @Test("Given tmpfs and procfs, when a batcher starts, then its durability line says which method it uses and why")
    func durabilityIsDescribed() {
        #expect(FlushBatcher(directory: "/dev/shm").durability == "one syncfs per batch (tmpfs, which keeps nothing across a reboot)")
        #expect(FlushBatcher(directory: "/proc").durability == "an fsync of each cover and directory (filesystem type 0x9fa0)")
    }

    @Test("Given many works submitted from many threads, when flushed, then each runs exactly once, without an error, and idle waits for all")
    func everyWorkRunsOnce() throws {
        let calls = SyncCalls()
        let batcher = try stubbedBatcher(calls: calls)
        let count = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 200) { _ in
            batcher.afterFlush(ticket: batcher.beginWrite()) { error in
                #expect(error == nil)
                count.withLock { $0 += 1 }
            }
        }
        batcher.waitUntilIdle()
        #expect(count.withLock { $0 } == 200)
        #expect(calls.value >= 1 && calls.value <= 200, "batched: at least one sync, never more than the works")
    }

    @Test("Given a directory on a filesystem that cannot be trusted, when works are submitted, then they run at once without a sync")
    func untrustedRunsAtOnce() {
        let batcher = FlushBatcher(directory: "/proc")
        let ran = Mutex(0)
        for _ in 0..<3 { batcher.afterFlush(ticket: batcher.beginWrite()) { error in ran.withLock { $0 += error == nil ? 1 : 100 } } }
        batcher.waitUntilIdle()
        #expect(ran.withLock { $0 } == 3)
    }

    @Test("Given a sync that fails, when works wait, then every write begun before the failure fails, even one submitted after it, and later writes succeed")
    func failedSyncFailsEveryEarlierWrite() throws {
        let calls = Mutex(0)
        let release = DispatchSemaphore(value: 0)
        let batcher = FlushBatcher(directory: "/dev/shm") { _ in
            let call = calls.withLock { $0 += 1; return $0 }
            if call == 1 { release.wait() }  // the first sync runs until the test lets it go
            errno = EIO
            return call == 1 ? -1 : 0
        }
        try #require(batcher.groupCommits, "/dev/shm must be tmpfs")
        let results = Mutex<[String: String]>([:])
        func record(_ name: String) -> @Sendable (SystemError?) -> Void {
            { error in results.withLock { $0[name] = error.map { "\($0.operation) \($0.code)" } ?? "ok" } }
        }
        batcher.afterFlush(ticket: batcher.beginWrite(), record("in the failing batch"))
        try waitUntil("the first sync to be running") { calls.withLock { $0 } == 1 }
        let queuedTicket = batcher.beginWrite()
        batcher.afterFlush(ticket: queuedTicket, record("queued meanwhile"))
        let lateTicket = batcher.beginWrite()  // written before the failure, submitted after it
        release.signal()
        try waitUntil("the failing batch to be answered") { results.withLock { $0.count } == 2 }
        batcher.afterFlush(ticket: lateTicket, record("submitted after the failure"))
        batcher.afterFlush(ticket: batcher.beginWrite(), record("begun after the failure"))
        batcher.waitUntilIdle()  // every work has run: its queue is serial
        #expect(results.withLock { $0.count } == 4)
        #expect(results.withLock { $0 } == [
            "in the failing batch": "syncfs \(EIO)", "queued meanwhile": "syncfs \(EIO)",
            "submitted after the failure": "syncfs \(EIO)", "begun after the failure": "ok",
        ])
    }

    /// Counts a stand-in `syncfs`'s calls; while `holding`, a call waits for the test's `release`.
    final class SyncCalls: Sendable {
        let count = Mutex(0)
        let holding = Mutex(false)
        let release = DispatchSemaphore(value: 0)
        var value: Int { count.withLock { $0 } }

        /// Lets a held sync go (and any later one: a semaphore is never freed below its start).
        func letGo() {
            holding.withLock { $0 = false }
            release.signal()
        }
    }

    /// A batcher on tmpfs whose syncs are `calls`'s stand-in.
    func stubbedBatcher(calls: SyncCalls, failing: Bool = false) throws -> FlushBatcher {
        let batcher = FlushBatcher(directory: "/dev/shm") { _ in
            calls.count.withLock { $0 += 1 }
            if calls.holding.withLock({ $0 }) { calls.release.wait() }
            if failing { errno = EIO }
            return failing ? -1 : 0
        }
        try #require(batcher.groupCommits, "/dev/shm must be tmpfs")
        return batcher
    }

    @Test("Given a batch being synced, when renames join it, then one more sync runs after it, shared by them all")
    func joinsDuringASyncShareTheNext() throws {
        let calls = SyncCalls()
        defer { calls.letGo() }
        let batcher = try stubbedBatcher(calls: calls)
        calls.holding.withLock { $0 = true }
        batcher.afterFlush(ticket: batcher.beginWrite()) { #expect($0 == nil) }
        try waitUntil("the first sync to be running") { calls.value == 1 }
        // Made after that sync started (renames, say): it cannot have covered them.
        let joined = (0..<50).map { _ in batcher.joinRunningFlush { _ in Issue.record("no sync fails here") } }
        #expect(joined.allSatisfy { $0 })
        calls.letGo()
        try waitUntil("the second sync") { calls.value == 2 }
        batcher.waitUntilIdle()
        #expect(calls.value == 2)
    }

    @Test("Given a synced batch whose work is still running, when the next batch waits, then its sync starts without waiting for that work")
    func nextSyncDoesNotWaitForWorks() throws {
        let calls = SyncCalls()
        defer { calls.letGo() }
        let batcher = try stubbedBatcher(calls: calls)
        let workMayEnd = DispatchSemaphore(value: 0)
        defer { workMayEnd.signal() }  // a failed expectation must not leave the work blocked
        calls.holding.withLock { $0 = true }
        batcher.afterFlush(ticket: batcher.beginWrite()) { _ in workMayEnd.wait() }
        try waitUntil("the first sync to be running") { calls.value == 1 }
        batcher.afterFlush(ticket: batcher.beginWrite()) { #expect($0 == nil) }
        calls.letGo()
        try waitUntil("the second sync, while the first batch's work still runs") { calls.value == 2 }
        workMayEnd.signal()
        batcher.waitUntilIdle()
        #expect(calls.value == 2)
    }

    @Test("Given no batch being synced, when a rename asks to join, then it is refused and no sync starts")
    func joiningAnIdleBatcherIsRefused() throws {
        let calls = SyncCalls()
        let batcher = try stubbedBatcher(calls: calls)
        #expect(!batcher.joinRunningFlush { _ in Issue.record("no sync runs") })
        batcher.waitUntilIdle()
        #expect(calls.value == 0)
        #expect(!FlushBatcher(directory: "/proc").joinRunningFlush { _ in }, "without group commits, never")
    }

    @Test("Given a lone batch, when its works run after its sync, then a rename they lead to is refused: the batcher is idle again")
    func worksOfTheLastBatchSeeItIdle() throws {
        let calls = SyncCalls()
        let batcher = try stubbedBatcher(calls: calls)
        let joined = Mutex<Bool?>(nil)
        batcher.afterFlush(ticket: batcher.beginWrite()) { _ in
            joined.withLock { $0 = batcher.joinRunningFlush { _ in Issue.record("no sync runs") } }
        }
        try waitUntil("the work to have run") { joined.withLock { $0 } != nil }
        batcher.waitUntilIdle()
        #expect(joined.withLock { $0 } == false)
        #expect(calls.value == 1, "one sync for the cover, none for its rename")
    }

    @Test("Given a rename joined to a batch whose sync fails, when the next sync fails too, then the rename's handler hears that error, once")
    func failedJoinedSyncIsReported() throws {
        let calls = SyncCalls()
        defer { calls.letGo() }
        let batcher = try stubbedBatcher(calls: calls, failing: true)
        let heard = Mutex<[String]>([])
        calls.holding.withLock { $0 = true }
        batcher.afterFlush(ticket: batcher.beginWrite()) { #expect($0 != nil) }
        try waitUntil("the first sync to be running") { calls.value == 1 }
        #expect(batcher.joinRunningFlush { error in heard.withLock { $0.append("\(error.operation) \(error.code)") } })
        calls.letGo()
        try waitUntil("the joined rename to hear of its sync") { heard.withLock { !$0.isEmpty } }
        batcher.waitUntilIdle()
        #expect(calls.value == 2, "the failed first sync did not count for the rename made during it")
        #expect(heard.withLock { $0 } == ["syncfs \(EIO)"])
    }

    @Test("Given renames riding on a batcher, when one is made while idle, then its directory is fsynced; during a batch, the batcher's next sync serves it")
    func directorySyncRidesOnlyOnRunningBatches() throws {
        let calls = SyncCalls()
        defer { calls.letGo() }
        let batcher = try stubbedBatcher(calls: calls)
        let directory = TestDirectory()
        let fsyncs = Mutex(0)
        let renames = DirectorySync(paths: [directory.path], ridingOn: batcher, onError: { Issue.record("unexpected \($0)") }) { _ in
            fsyncs.withLock { $0 += 1 }
            return 0
        }
        renames.request()
        try waitUntil("the idle rename's directory fsync") { fsyncs.withLock { $0 } == 1 }
        renames.flush()
        #expect(calls.value == 0, "idle: the batcher left alone")
        calls.holding.withLock { $0 = true }
        batcher.afterFlush(ticket: batcher.beginWrite()) { #expect($0 == nil) }
        try waitUntil("a batch to be running") { calls.value == 1 }
        renames.request()
        calls.letGo()
        try waitUntil("the sync the rename joined") { calls.value == 2 }
        renames.flush()
        #expect(calls.value == 2)
        #expect(fsyncs.withLock { $0 } == 1, "the rename during the batch cost no directory fsync")
    }
}
