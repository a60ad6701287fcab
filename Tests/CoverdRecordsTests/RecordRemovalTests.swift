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

    @Test("Given an object with the albums key twice, when an album is removed, then it is cut from the last list, the one coverd reads")
    func repeatedAlbumsKeyFollowsTheLast() throws {
        let text = #"{"albums": [{"id": "old", "title": "O", "artist": "A", "cover_url": "http://h/o"}], "albums": [{"id": "x", "title": "X", "artist": "A", "cover_url": "http://h/x"}, {"id": "y", "title": "Y", "artist": "B", "cover_url": "http://h/y"}]}"#
        let expected = #"{"albums": [{"id": "old", "title": "O", "artist": "A", "cover_url": "http://h/o"}], "albums": [{"id": "y", "title": "Y", "artist": "B", "cover_url": "http://h/y"}]}"#
        #expect(try rewritten(text, removing: "x") == expected)
    }

    @Test("Given entries with numbers, literals, unicode escapes and CRLF line ends, when one album is removed, then the others keep every byte")
    func numbersLiteralsEscapesAndCRLF() throws {
        let a = #"{"id": "a", "title": "\u00c9t\u00e9 \"\\\"", "artist": "X", "cover_url": "http://h/a", "rating": -1e5, "live": false, "extra": null}"#
        let b = #"{"id": "b", "title": "B", "artist": "Y", "cover_url": "http://h/b", "n": [1.5E+3, true, null]}"#
        let c = #"{"id": "c", "title": "C", "artist": "Z", "cover_url": "http://h/c"}"#
        let text = "[\r\n  \(a),\r\n  \(b),\r\n  \(c)\r\n]\r\n"
        #expect(try rewritten(text, removing: "b") == "[\r\n  \(a),\r\n  \(c)\r\n]\r\n")
        #expect(try rewritten(text, removing: "a") == "[\r\n  \(b),\r\n  \(c)\r\n]\r\n")
    }

    @Test("Given a list that holds one album twice, when it is removed, then both entries go and the others stay in order")
    func repeatedAlbumGoesEverywhere() throws {
        let x = #"{"id": "x", "title": "X", "artist": "A", "cover_url": "http://h/x"}"#
        let y = #"{"id": "y", "title": "Y", "artist": "B", "cover_url": "http://h/y"}"#
        #expect(try rewritten("[\(x), \(y), \(x)]", removing: "x") == "[\(y)]")
    }

    @Test("Given a cut that leaves the decoder other albums than expected, when it is checked, then the file is refused as unfollowable")
    func disagreementIsRefused() throws {
        let x = #"{"id": "x", "title": "X", "artist": "A", "cover_url": "http://h/x"}"#
        let y = #"{"id": "y", "title": "Y", "artist": "B", "cover_url": "http://h/y"}"#
        let decoder = JSONRecordDecoder()
        #expect(throws: Never.self) { try RecordRemoval.check(Array("[\(y)]".utf8), holds: [try id("y")], record: "/r/a.json", decoder: decoder) }
        for wrong in ["[\(x)]", "[\(x), \(y)]", "[\(y), \(y)", "[]"] {
            #expect(throws: RecordRemovalError.unfollowable(path: "/r/a.json")) {
                try RecordRemoval.check(Array(wrong.utf8), holds: [try id("y")], record: "/r/a.json", decoder: decoder)
            }
        }
    }
}
