@testable import CoverdCore
import CLinux
import CoverdTestSupport
import Foundation
import Testing

/// Pages of `path` resident in the page cache, by mincore(2) on a mapping of it.
private func residentPages(_ path: String) throws -> Int {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { throw POSIXError(.ENOENT) }
    defer { close(fd) }
    var info = stat()
    guard fstat(fd, &info) == 0, info.st_size > 0 else { return 0 }
    let length = Int(info.st_size)
    guard let mapping = mmap(nil, length, PROT_READ, MAP_SHARED, fd, 0), mapping != MAP_FAILED else { throw POSIXError(.EINVAL) }
    defer { munmap(mapping, length) }
    let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
    var vector = [UInt8](repeating: 0, count: (length + pageSize - 1) / pageSize)
    guard mincore(mapping, length, &vector) == 0 else { throw POSIXError(.EINVAL) }
    return vector.filter { $0 & 1 != 0 }.count
}

@Suite("Temporary covers kept open until their flush")
struct WrittenFileTests {
    let directory = TestDirectory()

    @Test("Given a cover written without a flush, when its batch is durable and its pages dropped, then none stays cached and its place is given back")
    func pagesDroppedAfterFlush() throws {
        let budget = WrittenFileBudget(limit: 4)
        let store = CoverStore(cacheDirectory: directory.path, openFiles: budget)
        try store.createDirectory()
        // tmpfs keeps every page (it has no disk to drop them to): there is nothing to see there.
        try #require(coverd_filesystem_type(store.directory) != 0x0102_1994, "the test directory is on tmpfs")
        let bytes = [UInt8](repeating: 0xAB, count: 256 * 1024)
        let temporary = try store.writeTemporary(bytes, for: try AlbumID(validating: "x"), flush: false)
        let file = try #require(temporary.file)
        #expect(budget.openCount == 1)
        #expect(try residentPages(temporary.path) > 0)

        let descriptor = open(store.directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        defer { close(descriptor) }
        #expect(syncfs(descriptor) == 0)
        file.dropCachedPages()

        #expect(try residentPages(temporary.path) == 0)
        #expect(budget.openCount == 0)
        let stamp = try store.commit(temporary, as: try AlbumID(validating: "x"))
        #expect(stamp.bytes == bytes.count)
        #expect(readBytes(store.path(for: try AlbumID(validating: "x"))) == bytes)
    }

    @Test("Given every place taken, when another cover is written, then it comes back closed and the limit holds")
    func budgetBoundsOpenFiles() throws {
        let budget = WrittenFileBudget(limit: 2)
        let store = CoverStore(cacheDirectory: directory.path, openFiles: budget)
        try store.createDirectory()
        let bytes = PNGFixture.make()
        let written = try (0..<3).map { try store.writeTemporary(bytes, for: try AlbumID(validating: "a\($0)"), flush: false) }
        #expect(written.map { $0.file != nil } == [true, true, false])
        #expect(budget.openCount == 2)

        written[0].file?.release()
        #expect(budget.openCount == 1)
        store.discard(written[1])
        #expect(budget.openCount == 0)
        // Released twice (a copy of the same TemporaryCover): the place is given back once.
        written[0].file?.dropCachedPages()
        store.discard(written[0])
        #expect(budget.openCount == 0)
        #expect(try store.writeTemporary(bytes, for: try AlbumID(validating: "b"), flush: false).file != nil)
    }

    @Test("Given a cover written with its own flush, when it returns, then nothing is left open")
    func flushedCoverIsClosed() throws {
        let budget = WrittenFileBudget(limit: 2)
        let store = CoverStore(cacheDirectory: directory.path, openFiles: budget)
        try store.createDirectory()
        let temporary = try store.writeTemporary(PNGFixture.make(), for: try AlbumID(validating: "x"), flush: true)
        #expect(temporary.file == nil)
        #expect(budget.openCount == 0)
    }
}
