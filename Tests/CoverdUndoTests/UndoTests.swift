@testable import CoverdUndo
import CoverdModel
import CoverdTestSupport
import Foundation
import Testing

@Suite("Undo journal and undo")
struct UndoTests {
    let directory = TestDirectory("coverd-undo")
    var records: String { directory.sub("albums") }
    var cache: String { directory.path + "/cache" }

    func remover() -> AlbumRemover { AlbumRemover(recordsDirectory: records, cacheDirectory: cache) }

    @Test("Given an entry, when written and read back, then it is the same, the removal's file deleted or rewritten alike")
    func entryRoundTrip() throws {
        for after in [Optional<[UInt8]>.none, [1, 2, 10, 0]] {
            let entry = UndoEntry(
                sequence: 7, record: "/r/a \"b\".json", album: try AlbumID(validating: "x"), mode: 0o640, before: [0x0A, 0x7B, 0xFF],
                after: after.map(UndoEntry.Fingerprint.init), removedAt: Date(timeIntervalSince1970: 1_700_000_000))
            #expect(try UndoEntry.decode(entry.encoded(), sequence: 7) == entry)
        }
    }

    @Test("Given an entry, when written, then it holds the bytes before and only a fingerprint of the bytes after")
    func entryKeepsAFingerprintNotTheBytesAfter() throws {
        let after = [UInt8](repeating: 0x41, count: 10_000)
        let entry = UndoEntry(
            record: "/r/a.json", album: try AlbumID(validating: "x"), mode: 0o644, before: [1, 2, 3], after: UndoEntry.Fingerprint(of: after),
            removedAt: Date())
        #expect(entry.encoded().count < 400)
        #expect(entry.after?.matches(after) == true)
        #expect(entry.after?.matches(after.dropLast() + [0x42]) == false)
        #expect(entry.after?.matches(after + [0x41]) == false)
    }

    @Test("Given an entry of the first version, which kept the bytes after whole, when read, then its fingerprint is of those bytes")
    func firstVersionEntriesStillRead() throws {
        let text = "{\"version\": 1, \"record\": \"/r/a.json\", \"album\": \"x\", \"mode\": 420, \"removed_at\": 1, \"before\": 3, \"after\": 2}\nabcde"
        let entry = try UndoEntry.decode(Array(text.utf8), sequence: 4)
        #expect(entry.before == Array("abc".utf8))
        #expect(entry.after == UndoEntry.Fingerprint(of: Array("de".utf8)))
    }

    @Test("Given a damaged entry, when read, then the damage is named", arguments: [
        "no newline at all", "{\"version\": 3}\n",
        "{\"version\": 2, \"record\": \"/r\", \"album\": \"x\", \"mode\": 420, \"removed_at\": 1, \"before\": 5, \"after\": null}\nab",
        "{\"version\": 2, \"record\": \"/r\", \"album\": \"x\", \"mode\": 420, \"removed_at\": 1, \"before\": 0, \"after\": {\"length\": 1, \"sha256\": \"zz\"}}\n",
        "{\"version\": 2, \"record\": \"/r\", \"album\": \"x\", \"mode\": 99999999999, \"removed_at\": 1, \"before\": 0, \"after\": null}\n",
        "{\"version\": 1, \"record\": \"/r\", \"album\": \"x\", \"mode\": 420, \"removed_at\": 1, \"before\": 9223372036854775807, \"after\": 9}\n",
    ])
    func damagedEntry(text: String) {
        #expect(throws: UndoJournalError.Damage.self) { try UndoEntry.decode(Array(text.utf8), sequence: 1) }
    }

    @Test("Given 60 removals, when the journal is pruned, then the last 50 stay and undo goes back through them newest first")
    func journalKeepsTheLastFifty() throws {
        let journal = UndoJournal(cacheDirectory: cache)
        let album = try AlbumID(validating: "a")
        try journal.locked { () throws(UndoError) in
            for number in 1...60 {
                do throws(UndoJournalError) {
                    _ = try journal.append(UndoEntry(record: "/r/\(number).json", album: album, mode: 0o644, before: [], after: nil, removedAt: Date()))
                } catch {
                    throw .journal(error)
                }
            }
        }
        try journal.prune()
        let names = try FileManager.default.contentsOfDirectory(atPath: journal.directory).filter { $0.hasSuffix(".undo") }
        #expect(names.count == UndoJournal.kept)
        #expect(try journal.newest()?.record == "/r/60.json")
    }

    @Test("Given 30 removals of large files, when the journal is pruned, then entries past its byte budget go but never below 20")
    func largeEntriesAreKeptDownToTwenty() throws {
        let journal = UndoJournal(cacheDirectory: cache)
        let album = try AlbumID(validating: "a")
        let large = [UInt8](repeating: 0x20, count: Int(UndoJournal.keptBytes) / 10)
        try journal.locked { () throws(UndoError) in
            for number in 1...30 {
                do throws(UndoJournalError) {
                    _ = try journal.append(UndoEntry(record: "/r/\(number).json", album: album, mode: 0o644, before: large, after: nil, removedAt: Date()))
                    try journal.prune()
                } catch {
                    throw .journal(error)
                }
            }
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: journal.directory).filter { $0.hasSuffix(".undo") }.sorted()
        #expect(names.count == UndoJournal.keptAtLeast)
        #expect(names.first == "0000000000000011.undo")
    }

    @Test("Given a removal whose file was changed since, when undo is refused and then skipped, then the next undo restores the older removal")
    func skipSetsAStuckEntryAside() throws {
        let first = records + "/first.json", second = records + "/second.json"
        let firstText = #"[{"title": "A", "artist": "X", "cover_url": "http://h/a", "id": "a"}, {"title": "B", "artist": "Y", "cover_url": "http://h/b", "id": "b"}]"#
        let secondText = #"[{"title": "C", "artist": "X", "cover_url": "http://h/c", "id": "c"}, {"title": "D", "artist": "Y", "cover_url": "http://h/d", "id": "d"}]"#
        try writeAtomically(firstText, to: first)
        try writeAtomically(secondText, to: second)
        _ = try remover().remove(try AlbumID(validating: "a"))
        _ = try remover().remove(try AlbumID(validating: "c"))
        try writeAtomically("[]", to: second)
        let undoer = Undoer(cacheDirectory: cache)
        #expect { _ = try undoer.undo() } throws: { "\($0)".contains("coverd undo --skip") && "\($0)".contains(second) }

        // When
        let aside = try undoer.skipNewest()
        let outcome = try undoer.undo()

        // Then
        #expect(aside?.hasSuffix(".skipped") == true)
        guard case .restored(let entry) = outcome else { Issue.record("\(outcome)"); return }
        #expect(entry.record == first)
        #expect(readBytes(first) == Array(firstText.utf8))
        #expect(readBytes(second) == Array("[]".utf8))
    }

    @Test("Given a record that is a symbolic link, or has a second hard link, when an album is removed, then it is refused and nothing changes")
    func linkedRecordsAreRefused() throws {
        let text = #"[{"title": "A", "artist": "X", "cover_url": "http://h/a", "id": "a"}, {"title": "B", "artist": "Y", "cover_url": "http://h/b", "id": "b"}]"#
        let real = directory.path + "/elsewhere.json"
        try writeAtomically(text, to: real)
        try FileManager.default.createDirectory(atPath: records, withIntermediateDirectories: true)
        #expect(symlink(real, records + "/linked.json") == 0)
        #expect { _ = try remover().remove(try AlbumID(validating: "a")) } throws: { "\($0)".contains("is a symbolic link to \(real)") }
        #expect(unlink(records + "/linked.json") == 0)
        #expect(link(real, records + "/hard.json") == 0)
        #expect { _ = try remover().remove(try AlbumID(validating: "a")) } throws: { "\($0)".contains("has 2 hard links") }
        #expect(readBytes(real) == Array(text.utf8))
        #expect { _ = try Undoer(cacheDirectory: cache).undo() } throws: { "\($0)".hasPrefix("nothing to undo") }
    }

    @Test("Given a temporary file a killed remove left beside the record, when another album is removed, then it is swept and a live one is not")
    func deadTemporariesAreSwept() throws {
        let path = records + "/a.json"
        try writeAtomically(#"[{"title": "A", "artist": "X", "cover_url": "http://h/a", "id": "a"}, {"title": "B", "artist": "Y", "cover_url": "http://h/b", "id": "b"}]"#, to: path)
        let dead = records + "/.a.json.4194305-dead.tmp", live = records + "/.a.json.\(getpid())-live.tmp"
        try writeAtomically("x", to: dead)
        try writeAtomically("x", to: live)

        // When
        _ = try remover().remove(try AlbumID(validating: "a"))

        // Then
        #expect(access(dead, F_OK) != 0)
        #expect(access(live, F_OK) == 0)
    }

    @Test("Given an album in two record files, when removed, then the first file loses it and a warning names the other")
    func albumInAnotherFileIsNamed() throws {
        let album = #"{"title": "A", "artist": "X", "cover_url": "http://h/a", "id": "a"}"#
        try writeAtomically("[\(album), {\"title\": \"B\", \"artist\": \"Y\", \"cover_url\": \"http://h/b\", \"id\": \"b\"}]", to: records + "/1.json")
        try FileManager.default.createDirectory(atPath: records + "/sub", withIntermediateDirectories: true)
        try writeAtomically(album, to: records + "/sub/2.json")

        // When
        let removal = try remover().remove(try AlbumID(validating: "a"))

        // Then
        #expect(removal.record == records + "/1.json")
        #expect(removal.warnings.contains { $0.contains(records + "/sub/2.json") })
    }

    @Test("Given a removal whose record was not changed (a crash after the journal), when undone, then it says so and the file is as it was")
    func removalThatHadNotHappened() throws {
        let text = #"[{"title": "A", "artist": "X", "cover_url": "http://h/a", "id": "a"}, {"title": "B", "artist": "Y", "cover_url": "http://h/b", "id": "b"}]"#
        try writeAtomically(text, to: records + "/a.json")
        _ = try remover().remove(try AlbumID(validating: "a"))
        try writeAtomically(text, to: records + "/a.json")  // As though the rewrite never landed.

        // When
        let outcome = try Undoer(cacheDirectory: cache).undo()

        // Then
        guard case .hadNotHappened(let entry) = outcome else { Issue.record("\(outcome)"); return }
        #expect(entry.record == records + "/a.json")
        #expect(readBytes(records + "/a.json") == Array(text.utf8))
    }

    @Test("Given a record whose mode is 0600, when an album is removed and undone, then the file keeps its mode")
    func modeIsKept() throws {
        let path = records + "/a.json"
        try writeAtomically(#"[{"title": "A", "artist": "X", "cover_url": "http://h/a", "id": "a"}, {"title": "B", "artist": "Y", "cover_url": "http://h/b", "id": "b"}]"#, to: path)
        #expect(chmod(path, 0o600) == 0)

        // When
        _ = try remover().remove(try AlbumID(validating: "a"))
        _ = try Undoer(cacheDirectory: cache).undo()

        // Then
        var info = stat()
        #expect(stat(path, &info) == 0 && info.st_mode & 0o777 == 0o600)
    }

    @Test("Given an album in no record, when removed, then it is refused naming the records directory, and the journal stays empty")
    func unknownAlbum() throws {
        try writeAtomically(#"{"title": "A", "artist": "X", "cover_url": "http://h/a", "id": "a"}"#, to: records + "/a.json")
        #expect {
            _ = try remover().remove(try AlbumID(validating: "nope"))
        } throws: { error in
            "\(error)".contains("no album nope in the records under \(records)")
        }
        #expect { _ = try Undoer(cacheDirectory: cache).undo() } throws: { "\($0)".hasPrefix("nothing to undo") }
    }

    @Test("Given a single-album file removed and its folder deleted after, when undone, then the folder and the file come back")
    func undoRecreatesTheFolder() throws {
        let folder = records + "/sub"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let text = #"{"title": "S", "artist": "X", "cover_url": "http://h/s", "id": "s"}"#
        try writeAtomically(text, to: folder + "/s.json")
        _ = try remover().remove(try AlbumID(validating: "s"))
        #expect(rmdir(folder) == 0)

        // When
        let outcome = try Undoer(cacheDirectory: cache).undo()

        // Then
        guard case .restored = outcome else { Issue.record("\(outcome)"); return }
        #expect(readBytes(folder + "/s.json") == Array(text.utf8))
    }

    @Test("Given a cache directory with no undo journal (a mistyped --cache), when undo runs, then it says there is nothing to undo and creates nothing")
    func undoOnAMistypedCacheCreatesNothing() throws {
        let typo = directory.path + "/no/such/cache"
        #expect { _ = try Undoer(cacheDirectory: typo).undo() } throws: { "\($0)".hasPrefix("nothing to undo") }
        #expect(try Undoer(cacheDirectory: typo).skipNewest() == nil)
        #expect(access(directory.path + "/no", F_OK) != 0)
    }

    @Test("Given a record that cannot be read, when an album not found elsewhere is removed, then the refusal names that file and why")
    func unreadableRecordIsNamed() throws {
        try writeAtomically(#"{"title": "A", "artist": "X", "cover_url": "http://h/a", "id": "a"}"#, to: records + "/a.json")
        try writeAtomically("[{", to: records + "/broken.json")
        #expect {
            _ = try remover().remove(try AlbumID(validating: "b"))
        } throws: { error in
            "\(error)".contains("no album b") && "\(error)".contains(records + "/broken.json")
        }
    }
}
