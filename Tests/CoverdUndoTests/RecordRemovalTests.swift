@testable import CoverdRecords
import CoverdModel
import Testing

@Suite("Record removal: an album cut out of its record file")
struct RecordRemovalTests {
    func id(_ text: String) throws -> AlbumID { try AlbumID(validating: text) }

    func plan(_ text: String, removing album: String, record: String = "/r/a.json") throws -> RecordRemoval {
        try RecordRemoval.plan(removing: try id(album), from: Array(text.utf8), record: record)
    }

    func rewritten(_ text: String, removing album: String) throws -> String? {
        guard case .rewrite(let bytes) = try plan(text, removing: album) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test("Given a list, when its first, middle or last album is removed, then the others keep their bytes and the list its layout", arguments: [
        ("a", "[\n  {\"id\": \"b\", \"title\": \"B\", \"artist\": \"Y\", \"cover_url\": \"http://h/b\"},\n  {\"id\": \"c\", \"title\": \"C\", \"artist\": \"Z\", \"cover_url\": \"http://h/c\"}\n]\n"),
        ("b", "[\n  {\"id\": \"a\", \"title\": \"A\", \"artist\": \"X\", \"cover_url\": \"http://h/a\"},\n  {\"id\": \"c\", \"title\": \"C\", \"artist\": \"Z\", \"cover_url\": \"http://h/c\"}\n]\n"),
        ("c", "[\n  {\"id\": \"a\", \"title\": \"A\", \"artist\": \"X\", \"cover_url\": \"http://h/a\"},\n  {\"id\": \"b\", \"title\": \"B\", \"artist\": \"Y\", \"cover_url\": \"http://h/b\"}\n]\n"),
    ])
    func cutFromAList(album: String, expected: String) throws {
        let list = """
            [
              {"id": "a", "title": "A", "artist": "X", "cover_url": "http://h/a"},
              {"id": "b", "title": "B", "artist": "Y", "cover_url": "http://h/b"},
              {"id": "c", "title": "C", "artist": "Z", "cover_url": "http://h/c"}
            ]

            """
        #expect(try rewritten(list, removing: album) == expected)
    }

    @Test("Given {\"albums\": [...]} with other keys and strings full of brackets, quotes and escapes, when one album is removed, then only its entry goes")
    func cutFromAWrappedList() throws {
        let text = #"{"note": "a ] tricky \" [string", "albums": [{"id": "x", "title": "X }]", "artist": "A", "cover_url": "http://h/x"}, {"id": "y", "title": "Y \\", "artist": "B", "cover_url": "http://h/y", "tags": [1, {"k": "]"}]}], "after": true}"#
        let expected = #"{"note": "a ] tricky \" [string", "albums": [{"id": "y", "title": "Y \\", "artist": "B", "cover_url": "http://h/y", "tags": [1, {"k": "]"}]}], "after": true}"#
        #expect(try rewritten(text, removing: "x") == expected)
    }

    @Test("Given a file holding one album, as an object or as a list of one, when it is removed, then the file is to be deleted")
    func onlyAlbumDeletesTheFile() throws {
        #expect(try plan(#"{"id": "x", "title": "X", "artist": "A", "cover_url": "http://h/x"}"#, removing: "x") == .deleteFile)
        #expect(try plan(#"[{"id": "x", "title": "X", "artist": "A", "cover_url": "http://h/x"}]"#, removing: "x") == .deleteFile)
    }

    @Test("Given a list with an album and an entry coverd rejects, when the album is removed, then the rejected entry stays")
    func rejectedEntriesStay() throws {
        let text = #"[{"id": "x", "title": "X", "artist": "A", "cover_url": "http://h/x"}, {"title": 5}]"#
        #expect(try rewritten(text, removing: "x") == #"[{"title": 5}]"#)
    }

    @Test("Given a byte order mark, when an album is removed, then the mark stays")
    func byteOrderMarkStays() throws {
        let text = "\u{FEFF}[{\"id\": \"x\", \"title\": \"X\", \"artist\": \"A\", \"cover_url\": \"http://h/x\"}, {\"id\": \"y\", \"title\": \"Y\", \"artist\": \"B\", \"cover_url\": \"http://h/y\"}]"
        #expect(try rewritten(text, removing: "y") == "\u{FEFF}[{\"id\": \"x\", \"title\": \"X\", \"artist\": \"A\", \"cover_url\": \"http://h/x\"}]")
    }

    @Test("Given an archive, an album not in the file, or a file that is not JSON, when removal is planned, then it is refused saying which")
    func refusals() throws {
        #expect(throws: RecordRemovalError.archive(path: "/r/albums.bin")) { try plan("", removing: "x", record: "/r/albums.bin") }
        #expect(throws: RecordRemovalError.notInFile(id: try id("z"), path: "/r/a.json")) {
            try plan(#"[{"id": "x", "title": "X", "artist": "A", "cover_url": "http://h/x"}]"#, removing: "z")
        }
        #expect {
            try plan("[{", removing: "x")
        } throws: { error in
            guard case .unreadable = error as? RecordRemovalError else { return false }
            return true
        }
    }
}
