@testable import CoverdBase
@testable import CoverdCache
@testable import CoverdModel
import CoverdTestSupport
import Foundation
import Testing

@Suite("Cache store and index")
struct CacheTests {
    let directory = TestDirectory()

    @Test("Given a cover, when written and committed, then covers/ holds nothing until <id>.png appears with exactly the bytes, and no temporary file remains")
    func atomicWrite() throws {
        let store = CoverStore(cacheDirectory: directory.path)
        try store.createDirectory()
        let id = try AlbumID(validating: "x")
        let png = PNGFixture.make()
        let temporary = try store.writeTemporary(png, for: id)
        #expect(store.listNames().isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: store.temporaryDirectory).map { $0.hasPrefix(".x.") } == [true])
        let stamp = try store.commit(temporary, as: id)
        #expect(stamp.bytes == png.count)
        #expect(readBytes(store.path(for: id)) == png)
        #expect(store.listNames() == ["x.png"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: store.temporaryDirectory).isEmpty)
    }

    @Test("Given temporary files left by a crash, in incoming/ and (as older versions left them) in covers/, when the store starts, then they are removed and covers kept")
    func leftovers() throws {
        let store = CoverStore(cacheDirectory: directory.path)
        try store.createDirectory()
        try writeAtomically(PNGFixture.make(), to: store.directory + "/keep.png")
        #expect(FileManager.default.createFile(atPath: store.temporaryDirectory + "/.y.abc.tmp", contents: Data([4])))
        #expect(FileManager.default.createFile(atPath: store.directory + "/.x.abc.tmp", contents: Data([1, 2, 3])))
        #expect(store.removeLeftovers() == [store.temporaryDirectory + "/.y.abc.tmp", store.directory + "/.x.abc.tmp"])
        #expect(store.listNames() == ["keep.png"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: store.temporaryDirectory).isEmpty)
    }

    @Test("Given an earlier run's temporary file and this run's, when swept sparing this run, then only the earlier one goes")
    func sweepSparesThisRun() throws {
        // Given: an id with dots, a leftover named as an earlier run names them, and a temporary of this store
        let store = CoverStore(cacheDirectory: directory.path)
        try store.createDirectory()
        let id = try AlbumID(validating: "a.b-c")
        let earlier = CoverStore(cacheDirectory: directory.path)
        let old = try earlier.writeTemporary(PNGFixture.make(), for: id)
        let own = try store.writeTemporary(PNGFixture.make(), for: id)
        #expect(store.isOwnTemporary((own.path as NSString).lastPathComponent))
        #expect(!store.isOwnTemporary((old.path as NSString).lastPathComponent))
        // When
        let swept = store.removeLeftovers(sparingThisRun: true)
        // Then
        #expect(swept == [old.path])
        #expect(FileManager.default.fileExists(atPath: own.path))
        // And at a stop, every temporary goes
        #expect(store.removeLeftovers() == [own.path])
    }

    @Test("Given covers/ a symlink to a directory on another mount, when the store is set up, then temporaries are written in covers/ and a cover still commits",
          .enabled(if: FileManager.default.fileExists(atPath: "/dev/shm"), "no /dev/shm to stand for another mount"))
    func coversOnAnotherMount() throws {
        // Given
        let elsewhere = TestDirectory()  // in the system's temporary directory
        let other = "/dev/shm/coverd-test-\(UInt64.random(in: 0...UInt64.max))"
        try makeDirectories(other)
        defer { try? FileManager.default.removeItem(atPath: other) }
        try makeDirectories(elsewhere.path)
        try FileManager.default.createSymbolicLink(atPath: elsewhere.path + "/covers", withDestinationPath: other)
        let sameMount = try CoverStore(cacheDirectory: directory.path).setUp()
        try #require(CoverStore.renameFailure(from: elsewhere.path, to: other)?.code == EXDEV, "/dev/shm is on the same mount here")

        // When
        let setUp = try CoverStore(cacheDirectory: elsewhere.path).setUp()
        let store = setUp.store
        let id = try AlbumID(validating: "x")
        let temporary = try store.writeTemporary(PNGFixture.make(), for: id)
        _ = try store.commit(temporary, as: id)

        // Then
        #expect(sameMount.store.temporaryDirectory == sameMount.store.incomingDirectory)
        #expect(sameMount.renameFailure == nil)
        #expect(store.temporaryDirectory == store.directory)
        #expect(store.renamedDirectories == [store.directory])
        #expect(sameMount.store.renamedDirectories == [sameMount.store.directory, sameMount.store.incomingDirectory])
        #expect(setUp.renameFailure?.description.contains("Invalid cross-device link") == true, "\(String(describing: setUp.renameFailure))")
        #expect(readBytes(other + "/x.png") == PNGFixture.make())
        #expect(try FileManager.default.contentsOfDirectory(atPath: other).sorted() == [".removed", "x.png"])
        #expect(store.keptDirectory == store.directory + "/.removed", "kept covers stay a rename away, on the covers' filesystem")
        #expect(sameMount.store.keptDirectory == sameMount.store.incomingDirectory.replacingOccurrences(of: "incoming", with: "removed"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: store.incomingDirectory).isEmpty)
    }

    @Test("Given rows written in one batch, when read back by another connection, then every field round-trips")
    func indexRoundTrip() throws {
        let index = try CoverIndex(cacheDirectory: directory.path)
        let album = Album(
            id: try AlbumID(validating: "x"), title: "Tïtle \"q\"", artist: "A", year: "1999", genre: nil,
            coverURL: try CoverURL(validating: "http://h/a.png"), record: "/r/a.json")
        var row = IndexRow(album: album, state: .failed, updatedAt: Date(timeIntervalSince1970: 5))
        row.error = "HTTP 404"
        row.attempts = 3
        row.nextRetry = Date(timeIntervalSince1970: 100)
        row.bytes = 10
        row.fileMTime = 12345
        row.httpStatus = 404
        let other = IndexRow(album: Album(id: try AlbumID(validating: "y"), title: "T", artist: "A", coverURL: album.coverURL, record: "/r/b.json"), state: .cached, updatedAt: Date(timeIntervalSince1970: 5))
        try index.apply([.upsert(row), .upsert(other), .delete(try AlbumID(validating: "y"))])
        let reader = try CoverIndex(cacheDirectory: directory.path, readOnly: true)
        #expect(try reader.rows() == [row])
    }

    @Test("Given an index in a directory named with %, ? and #, closed by its writer, when opened immutable, then its rows read back")
    func immutableOpen() throws {
        let cache = directory.path + "/a%41 b?c#d"
        try makeDirectories(cache)
        let album = Album(id: try AlbumID(validating: "x"), title: "T", artist: "A", coverURL: try CoverURL(validating: "http://h/a.png"), record: "/r/a.json")
        let row = IndexRow(album: album, state: .cached, updatedAt: Date(timeIntervalSince1970: 5))
        do {
            try CoverIndex(cacheDirectory: cache).apply([.upsert(row)])
        }  // Closed: the last connection checkpoints the log and removes it.
        #expect(!FileManager.default.fileExists(atPath: cache + "/index.sqlite3-wal"))
        let reader = try SQLiteConnection(path: cache + "/index.sqlite3", readOnly: true, immutable: true)
        var ids: [String] = []
        try reader.prepare("SELECT id FROM albums").query { ids.append($0.text(0) ?? "") }
        #expect(ids == ["x"])
        #expect(!FileManager.default.fileExists(atPath: cache + "/index.sqlite3-shm"), "an immutable reader creates nothing beside the file")
        #expect(SQLiteConnection.immutableURI("//srv/c") == "file:////srv/c?immutable=1")
        #expect(SQLiteConnection.immutableURI("c/i%") == "file:c/i%25?immutable=1")
    }

    @Test("Given a reader's first read failed, when deciding whether to read the index as immutable, then only a file beside it that could not be made, on an index no one else has open and with no log, does")
    func readFallbackDecision() {
        // sqlite3.h's codes (the tests do not import SQLite): IOERR 10, READONLY 8, CANTOPEN 14, BUSY 5, CORRUPT 11, NOTADB 26.
        let besideFailures: [(Int32, Int32?)] = [
            (10 | 18 << 8, nil), (10 | 19 << 8, nil), (10 | 21 << 8, nil),  // SHMOPEN, SHMSIZE, SHMMAP
            (8 | 2 << 8, nil), (8 | 5 << 8, nil), (8 | 6 << 8, nil),  // READONLY_CANTLOCK, _CANTINIT, _DIRECTORY
            (14, EACCES), (10 | 3 << 8, ENOSPC), (10 | 3 << 8, EDQUOT),  // CANTOPEN; IOERR_WRITE for want of room
        ]
        for (code, errno) in besideFailures {
            #expect(CoverIndex.isFileBesideFailure(extendedCode: code, systemErrno: errno), "\(code) \(String(describing: errno))")
        }
        for code: Int32 in [5, 11, 26, 10 | 3 << 8] {
            #expect(!CoverIndex.isFileBesideFailure(extendedCode: code, systemErrno: code == 5 ? nil : EIO), "\(code)")
        }
        #expect(CoverIndex.readFallback(openElsewhere: false, logBytes: nil) == .immutable)
        #expect(CoverIndex.readFallback(openElsewhere: false, logBytes: 0) == .immutable)
        #expect(CoverIndex.readFallback(openElsewhere: false, logBytes: 4096) == .unmergedLog(bytes: 4096))
        #expect(CoverIndex.readFallback(openElsewhere: true, logBytes: nil) == .none, "a daemon has it open")
        #expect(CoverIndex.readFallback(openElsewhere: nil, logBytes: nil) == .none, "cannot tell")
    }

    @Test("Given another process holding SQLite's shared lock on an index, when asked whether it is open elsewhere, then yes, and no once that process is gone")
    func openElsewhere() throws {
        let path = directory.path + "/index.sqlite3"
        try Data(repeating: 0, count: 4096).write(to: URL(fileURLWithPath: path))
        #expect(CoverIndex.isOpenElsewhere(path) == false)
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        holder.arguments = ["python3", "-c", """
            import fcntl, os, sys
            fd = os.open(sys.argv[1], os.O_RDONLY)
            fcntl.lockf(fd, fcntl.LOCK_SH, 510, 0x40000002)
            print("locked", flush=True)
            sys.stdin.read()
            """, path]
        let input = Pipe()
        let output = Pipe()
        holder.standardInput = input
        holder.standardOutput = output
        try holder.run()
        // Blocks until the lock is held and said so; the line may come in more than one read.
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let more = output.fileHandleForReading.availableData
            if more.isEmpty { break }  // The holder ended without a whole line: the check below says so.
            line += more
        }
        #expect(String(decoding: line, as: UTF8.self) == "locked\n")
        #expect(CoverIndex.isOpenElsewhere(path) == true)
        try input.fileHandleForWriting.close()
        holder.waitUntilExit()
        #expect(CoverIndex.isOpenElsewhere(path) == false)
    }

    @Test("Given changes kept while index writes fail, when merged, then each album keeps only its last change and the index ends the same")
    func keptChangesMerge() throws {
        func row(_ id: String, _ state: CoverState) throws -> IndexRow {
            IndexRow(album: Album(id: try AlbumID(validating: id), title: "T", artist: "A", coverURL: try CoverURL(validating: "http://h/a.png"), record: "/r/a.json"),
                     state: state, updatedAt: Date(timeIntervalSince1970: 5))
        }
        let changes: [IndexChange] = [
            .upsert(try row("a", .pending)), .upsert(try row("b", .pending)), .upsert(try row("a", .failed)),
            .delete(try AlbumID(validating: "b")), .upsert(try row("c", .pending)), .upsert(try row("b", .cached)),
        ]
        let merged = IndexWriter.lastPerAlbum(changes)
        #expect(merged.map(\.albumID.rawValue) == ["a", "c", "b"])
        try makeDirectories(directory.path + "/all")
        try makeDirectories(directory.path + "/kept")
        let all = try CoverIndex(cacheDirectory: directory.path + "/all")
        let kept = try CoverIndex(cacheDirectory: directory.path + "/kept")
        try all.apply(changes)
        try kept.apply(merged)
        #expect(try all.rows() == kept.rows())
        #expect(try kept.rows().map(\.state) == [.failed, .cached, .pending])
    }

    @Test("Given covers, a missing one, a symlink and a directory, when stamped together, then each matches its own lstat")
    func stampsTogether() throws {
        // Given
        let store = CoverStore(cacheDirectory: directory.path)
        try store.createDirectory()
        try writeAtomically(PNGFixture.make(), to: store.directory + "/a.png")
        try writeAtomically(PNGFixture.make(width: 3, height: 2), to: store.directory + "/b.png")
        try #require(symlink(store.directory + "/a.png", store.directory + "/link.png") == 0)
        try #require(mkdir(store.directory + "/dir.png", 0o755) == 0)
        let ids = try ["b", "missing", "a", "link", "dir", "a"].map { try AlbumID(validating: $0) }
        // When
        let together = store.stamps(of: CoverFileNames(ids))
        let byPath = store.stamps(of: CoverFileNames(ids), in: nil)  // As when the directory cannot be opened.
        let gone = CoverStore(cacheDirectory: directory.path + "/none").stamps(of: CoverFileNames(ids))
        // Then: only the regular files have stamps, and they are their own
        #expect(together == ids.map { store.stamp(for: $0) })
        #expect(together.map { $0 != nil } == [true, false, true, false, false, true])
        #expect(together[0] != together[2])
        #expect(byPath == together)
        #expect(gone == Array(repeating: nil, count: ids.count))
    }

    @Test("Given a space reserve an earlier run made, when a new run's reserve is set up, then it owns that file and can release it")
    func reserveKeptAcrossRuns() throws {
        // Given
        let earlier = SpaceReserve(directory: directory.path, bytes: 64 * 1024)
        earlier.ensure()
        #expect(FileManager.default.fileExists(atPath: earlier.path))
        // When
        let later = SpaceReserve(directory: directory.path, bytes: 64 * 1024)
        // Then
        #expect(later.release())
        #expect(!FileManager.default.fileExists(atPath: later.path))
        #expect(!later.release(), "released once")
        #expect(!SpaceReserve(directory: directory.path, bytes: 64 * 1024).release(), "none left to release")
    }

    @Test("Given a sparse reserve file of the right size (copied without its blocks), when a run's reserve is set up, then it is not taken for room, and ensuring allocates it")
    func sparseReserveIsNotAdopted() throws {
        // Given
        let path = directory.path + "/.coverd-reserve"
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.truncate(atOffset: 64 * 1024)
        try handle.close()
        // When
        let reserve = SpaceReserve(directory: directory.path, bytes: 64 * 1024)
        // Then
        #expect(!reserve.release(), "a sparse file holds no room")
        reserve.ensure()
        var info = stat()
        #expect(lstat(path, &info) == 0 && Int(info.st_blocks) * 512 >= 64 * 1024)
        #expect(reserve.release())
    }
}

@Suite("JSON text in status output")
struct JSONTextTests {
    @Test("Given text with quotes, backslashes, controls and line separators, when quoted, then the JSON parses back to the same text")
    func escaping() throws {
        let samples = ["plain", "Sigur Rós – ( )", "say \"hi\"", "back\\slash", "tab\tnew\nline\r", "bell\u{07}nul\u{0}",
                       "js \u{2028} and \u{2029}", "", "emoji 🎵"]
        for sample in samples {
            let quoted = JSONText.quote(sample)
            let decoded = try JSONSerialization.jsonObject(with: Data("[\(quoted)]".utf8)) as? [String]
            #expect(decoded == [sample], "\(quoted)")
            #expect(!quoted.contains("\u{2028}") && !quoted.unicodeScalars.contains { $0.value < 0x20 })
        }
        #expect(JSONText.quote(nil) == "null")
    }
}
