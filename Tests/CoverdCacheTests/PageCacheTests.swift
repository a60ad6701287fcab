import CLinux
import CoverdCache
import CoverdModel
import CoverdTestSupport
import Foundation
import Testing

@Suite("Covers leave the page cache once durable")
struct PageCacheTests {
    let directory = TestDirectory()

    @Test("Given a cover written for a batched flush, when its filesystem is synced and its pages dropped, then none stays cached and the file is whole",
          .enabled(if: temporaryFilesCanLeavePageCache, "the temporary directory is on tmpfs"))
    func droppedAfterBatchFlush() throws {
        let store = CoverStore(cacheDirectory: directory.path)
        try store.createDirectory()
        let bytes = (0..<(256 * 1024)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let temporary = try store.writeTemporary(bytes, for: try AlbumID(validating: "x"), flush: false)
        #expect(try residentPages(temporary.path) > 0)

        let descriptor = open(store.directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        defer { close(descriptor) }
        #expect(syncfs(descriptor) == 0)
        store.dropCachedPages(of: temporary)

        #expect(try residentPages(temporary.path) == 0)
        _ = try store.commit(temporary, as: try AlbumID(validating: "x"))
        #expect(readBytes(store.path(for: try AlbumID(validating: "x"))) == bytes)
    }

    @Test("Given a cover written with its own fsync, when the write returns, then none of it stays cached",
          .enabled(if: temporaryFilesCanLeavePageCache, "the temporary directory is on tmpfs"))
    func droppedAfterOwnFsync() throws {
        let store = CoverStore(cacheDirectory: directory.path)
        try store.createDirectory()
        let temporary = try store.writeTemporary([UInt8](repeating: 7, count: 64 * 1024), for: try AlbumID(validating: "y"), flush: true)
        #expect(try residentPages(temporary.path) == 0)
    }

    @Test("Given a temporary file already gone, when its pages are dropped, then nothing is made in its place")
    func goneFileIsIgnored() throws {
        let store = CoverStore(cacheDirectory: directory.path)
        try store.createDirectory()
        let temporary = try store.writeTemporary(PNGFixture.make(), for: try AlbumID(validating: "z"), flush: false)
        store.discard(temporary)
        store.dropCachedPages(of: temporary)
        #expect(store.listNames().isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: store.incomingDirectory).isEmpty)
    }

    @Test("Given a temporary's name taken by a FIFO since, when its pages are dropped, then the call returns without waiting for a writer and the FIFO stays")
    func fifoUnderTheNameIsNotWaitedFor() throws {
        // Given
        let store = CoverStore(cacheDirectory: directory.path)
        try store.createDirectory()
        let temporary = try store.writeTemporary(PNGFixture.make(), for: try AlbumID(validating: "f"), flush: false)
        store.discard(temporary)
        try #require(mkfifo(temporary.path, 0o600) == 0)

        // When: on a thread of its own, so that a call that waits for a writer fails the deadline instead of hanging the suite.
        let returned = DispatchSemaphore(value: 0)
        Thread {
            store.dropCachedPages(of: temporary)
            returned.signal()
        }.start()
        let done = returned.wait(timeout: .now() + 10) == .success
        if !done {
            // Release the waiting open, so the thread ends.
            let writer = open(temporary.path, O_WRONLY | O_NONBLOCK)
            if writer >= 0 { close(writer) }
        }

        // Then
        #expect(done, "dropCachedPages waited on a FIFO")
        var info = stat()
        #expect(lstat(temporary.path, &info) == 0 && info.st_mode & S_IFMT == S_IFIFO)
    }
}
