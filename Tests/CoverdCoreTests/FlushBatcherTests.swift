@testable import CoverdCore
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

    @Test("Given many works submitted from many threads, when flushed, then each runs exactly once, without an error, and idle waits for all")
    func everyWorkRunsOnce() {
        let directory = TestDirectory()
        let batcher = FlushBatcher(directory: directory.path)
        let count = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 200) { _ in
            batcher.afterFlush(ticket: batcher.beginWrite()) { error in
                #expect(error == nil)
                count.withLock { $0 += 1 }
            }
        }
        batcher.waitUntilIdle()
        #expect(count.withLock { $0 } == 200)
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
        let directory = TestDirectory()
        let calls = Mutex(0)
        let release = DispatchSemaphore(value: 0)
        let batcher = FlushBatcher(directory: directory.path) { _ in
            let call = calls.withLock { $0 += 1; return $0 }
            if call == 1 { release.wait() }  // the first sync runs until the test lets it go
            errno = EIO
            return call == 1 ? -1 : 0
        }
        try #require(batcher.groupCommits, "the test directory must be on ext4, XFS, btrfs, F2FS or tmpfs")
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

    /// Counts a stand-in `syncfs`'s calls.
    final class SyncCalls: Sendable {
        let count = Mutex(0)
    }

    /// A batcher whose first sync runs until `release` is signalled; `calls` counts the syncs.
    func blockingBatcher(
        in directory: TestDirectory, calls: SyncCalls, release: DispatchSemaphore, failing: Bool = false
    ) throws -> FlushBatcher {
        let batcher = FlushBatcher(directory: directory.path) { _ in
            let call = calls.count.withLock { $0 += 1; return $0 }
            if call == 1 { release.wait() }
            errno = EIO
            return failing ? -1 : 0
        }
        try #require(batcher.groupCommits, "the test directory must be on ext4, XFS, btrfs, F2FS or tmpfs")
        return batcher
    }

    @Test("Given a sync already running, when flushes are requested, then one more sync runs after it, shared by all the requests")
    func requestsDuringASyncShareTheNext() throws {
        let directory = TestDirectory()
        let calls = SyncCalls()
        let release = DispatchSemaphore(value: 0)
        let batcher = try blockingBatcher(in: directory, calls: calls, release: release)
        batcher.requestFlush { _ in Issue.record("no sync fails here") }
        try waitUntil("the first sync to be running") { calls.count.withLock { $0 } == 1 }
        // Made after that sync started (a rename, say): it cannot have covered them.
        for _ in 0..<50 { batcher.requestFlush { _ in Issue.record("no sync fails here") } }
        release.signal()
        batcher.waitUntilIdle()
        #expect(calls.count.withLock { $0 } == 2)
    }

    @Test("Given a requested flush, when its sync fails, then the request's handler hears the error, once")
    func failedRequestedFlushIsReported() throws {
        let directory = TestDirectory()
        let calls = SyncCalls()
        let release = DispatchSemaphore(value: 0)
        release.signal()  // nothing to hold up (a semaphore made with 1 must not be freed at 0)
        let batcher = try blockingBatcher(in: directory, calls: calls, release: release, failing: true)
        let heard = Mutex<[String]>([])
        batcher.requestFlush { error in heard.withLock { $0.append("\(error.operation) \(error.code)") } }
        batcher.waitUntilIdle()
        #expect(heard.withLock { $0 } == ["syncfs \(EIO)"])
    }

    @Test("Given group commits, when a DirectorySync made on the batcher is asked for a sync, then it costs the batcher's syncfs, not a directory fsync")
    func directorySyncRidesOnTheBatch() throws {
        let directory = TestDirectory()
        let calls = SyncCalls()
        let release = DispatchSemaphore(value: 0)
        release.signal()
        let batcher = try blockingBatcher(in: directory, calls: calls, release: release)
        let renames = DirectorySync(groupCommitsOf: batcher) { error in Issue.record("unexpected \(error)") }
        renames.request()
        renames.flush()
        #expect(calls.count.withLock { $0 } == 1)
    }
}
