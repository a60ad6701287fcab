import CoverdCore
import CoverdTestSupport
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
            batcher.afterFlush { error in
                #expect(error == nil)
                count.withLock { $0 += 1 }
            }
        }
        batcher.waitUntilIdle()
        #expect(count.withLock { $0 } == 200)
    }

    @Test("Given a cache directory that vanished, when a flush runs, then every waiting work gets the error instead of success")
    func failedSyncFailsTheBatch() throws {
        let directory = TestDirectory()
        let covers = directory.sub("covers")
        let batcher = FlushBatcher(directory: covers)
        try #require(batcher.groupCommits, "the test directory must be on ext4, XFS, btrfs, F2FS or tmpfs")
        try FileManager.default.removeItem(atPath: covers)
        let errors = Mutex<[String]>([])
        for _ in 0..<3 {
            batcher.afterFlush { error in errors.withLock { $0.append(error?.description ?? "none") } }
        }
        batcher.waitUntilIdle()
        #expect(errors.withLock { $0 }.count == 3)
        #expect(errors.withLock { $0 }.allSatisfy { $0.contains("open") && $0.contains(covers) }, "\(errors.withLock { $0 })")
    }
}
