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
                after: after, removedAt: Date(timeIntervalSince1970: 1_700_000_000))
            #expect(try UndoEntry.decode(entry.encoded(), sequence: 7) == entry)
        }
    }

    @Test("Given a damaged entry, when read, then the damage is named", arguments: [
        "no newline at all", "{\"version\": 2}\n", "{\"version\": 1, \"record\": \"/r\", \"album\": \"x\", \"mode\": 420, \"removed_at\": 1, \"before\": 5, \"after\": null}\nab",
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
        let names = try FileManager.default.contentsOfDirectory(atPath: journal.directory).filter { $0.hasSuffix(".undo") }
        #expect(names.count == UndoJournal.kept)
        #expect(try journal.newest()?.record == "/r/60.json")
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
}
