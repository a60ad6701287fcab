import CoverdCore
import CoverdTestSupport
import Foundation
import Testing

@Suite("Unnamed temporary covers (O_TMPFILE)")
struct UnnamedFilesTests {
    let directory = TestDirectory()

    private func makeStore() throws -> CoverStore {
        let store = CoverStore(cacheDirectory: directory.path)
        try store.createDirectory()
        return store
    }

    @Test("Given a filesystem that group-commits, when an unflushed cover is written, then it has no name until committed, and then exactly its bytes")
    func writtenUnnamedThenLinked() throws {
        let store = try makeStore()
        #expect(FlushBatcher(directory: store.directory).groupCommits, "the tests' directory should be ext4, XFS, btrfs or tmpfs")
        let files = UnnamedFiles(directory: store.directory)
        let id = try AlbumID(validating: "x")
        let png = PNGFixture.make()
        let temporary = try store.writeTemporary(png, for: id, flush: false, unnamed: files)
        #expect(temporary.unnamed != nil)
        #expect(store.listNames().isEmpty)
        let stamp = try store.commit(temporary, as: id)
        #expect(readBytes(store.path(for: id)) == png)
        #expect(store.stamp(for: id) == stamp)
        #expect(store.listNames() == ["x.png"])
    }

    @Test("Given an unnamed cover that is discarded, when its last copy goes, then nothing is left in covers/")
    func discardedLeavesNothing() throws {
        let store = try makeStore()
        let files = UnnamedFiles(directory: store.directory, limit: 1)
        let id = try AlbumID(validating: "x")
        do {
            let temporary = try store.writeTemporary(PNGFixture.make(), for: id, flush: false, unnamed: files)
            #expect(temporary.unnamed != nil)
            store.discard(temporary)
        }
        #expect(store.listNames().isEmpty)
        // Its descriptor was given back: the one slot is free again.
        let next = try store.writeTemporary(PNGFixture.make(), for: id, flush: false, unnamed: files)
        #expect(next.unnamed != nil)
    }

    @Test("Given a cached cover, when an unnamed replacement is committed, then the file holds the new bytes and no staging name remains")
    func replacesExistingCover() throws {
        let store = try makeStore()
        let files = UnnamedFiles(directory: store.directory)
        let id = try AlbumID(validating: "x")
        let old = PNGFixture.make(width: 3, height: 3)
        let new = PNGFixture.make(width: 5, height: 4)
        _ = try store.commit(try store.writeTemporary(old, for: id), as: id)
        let replacement = try store.writeTemporary(new, for: id, flush: false, unnamed: files)
        #expect(replacement.unnamed != nil)
        _ = try store.commit(replacement, as: id)
        #expect(readBytes(store.path(for: id)) == new)
        #expect(store.listNames() == ["x.png"])
    }

    @Test("Given as many unnamed files open as the limit, when another cover is written, then it falls back to a named hidden file")
    func limitFallsBackToNamedFiles() throws {
        let store = try makeStore()
        let files = UnnamedFiles(directory: store.directory, limit: 2)
        let ids = try ["a", "b", "c"].map { try AlbumID(validating: $0) }
        let written = try ids.map { try store.writeTemporary(PNGFixture.make(), for: $0, flush: false, unnamed: files) }
        #expect(written.map { $0.unnamed != nil } == [true, true, false])
        #expect(store.listNames().count == 1)
        #expect(store.listNames().first?.hasPrefix(".c.") == true)
        for (temporary, id) in zip(written, ids) { _ = try store.commit(temporary, as: id) }
        #expect(store.listNames().sorted() == ["a.png", "b.png", "c.png"])
    }

    @Test("Given a flushed write, when written, then it is always a named file (the unnamed path is only for batched syncs)")
    func flushedWritesStayNamed() throws {
        let store = try makeStore()
        let files = UnnamedFiles(directory: store.directory)
        let temporary = try store.writeTemporary(PNGFixture.make(), for: try AlbumID(validating: "x"), flush: true, unnamed: files)
        #expect(temporary.unnamed == nil)
        #expect(store.listNames().count == 1)
    }
}
