import CoverdModel
import CoverdRecords
import CoverdTestSupport
import Foundation
import Testing

@Suite("Record decoding")
struct RecordDecodingTests {
    let decoder = JSONRecordDecoder()

    func decode(_ text: String) throws -> RecordContents {
        try decoder.decode(Array(text.utf8), record: "/records/a.json")
    }

    @Test("Given one album object, when decoded, then one album loads with every field")
    func singleObject() throws {
        let contents = try decode(#"{"title": "The Wall", "artist": "Pink Floyd", "cover_url": "https://e.com/w.png", "year": 1979, "genre": "Rock", "extra": [1]}"#)
        #expect(contents.rejections.isEmpty)
        let album = try #require(contents.albums.first)
        #expect(album.title == "The Wall")
        #expect(album.artist == "Pink Floyd")
        #expect(album.coverURL?.string == "https://e.com/w.png")
        #expect(album.year == "1979")
        #expect(album.genre == "Rock")
        #expect(album.record == "/records/a.json")
    }

    @Test("Given an array, when decoded, then every album loads in order")
    func array() throws {
        let contents = try decode(#"[{"title": "A", "artist": "X", "cover_url": "http://h/a.png"}, {"album": "B", "artist": "X", "coverUrl": "http://h/b.png", "year": "1990"}]"#)
        #expect(contents.albums.map(\.title) == ["A", "B"])
        #expect(contents.albums[1].year == "1990")
    }

    @Test("Given {\"albums\": [...]}, when decoded, then the list loads")
    func wrappedList() throws {
        let contents = try decode(#"{"albums": [{"title": "A", "artist": "X", "cover_url": "http://h/a.png"}]}"#)
        #expect(contents.albums.count == 1)
    }

    @Test("Given {\"albums\": 3}, when decoded, then the file is rejected with the reason")
    func wrappedListMustBeArray() {
        #expect(throws: RecordFileError.unexpectedShape(path: "/records/a.json", reason: "'albums' must be an array, found a number")) {
            try decode(#"{"albums": 3}"#)
        }
    }

    @Test("Given a bad album among good ones, when decoded, then only it is rejected, with position and reason",
          arguments: [
            (#"{"artist": "X", "cover_url": "http://h/a.png"}"#, "missing required field 'title'"),
            (#"{"title": 5, "artist": "X", "cover_url": "http://h/a.png"}"#, "'title' must be a string, found an integer"),
            (#"{"title": "  ", "artist": "X", "cover_url": "http://h/a.png"}"#, "'title' is empty"),
            (#"{"title": "T", "artist": "X", "cover_url": "ftp://h/a.png"}"#, "only http and https"),
            (#"{"title": "T", "artist": "X", "cover_url": "file:///etc/passwd"}"#, "only http and https"),
            (#"{"title": "T", "artist": "X", "cover_url": "javascript:alert(1)"}"#, "only http and https"),
            (#"{"title": "T", "artist": "X", "cover_url": "data:image/png;base64,AA=="}"#, "only http and https"),
            (#"{"title": "T", "artist": "X", "cover_url": "http:///a.png"}"#, "has no host"),
            (#"{"title": "T", "artist": "X", "cover_url": "http://h/a b.png"}"#, "contains a space"),
            (#"{"title": "T", "artist": "X", "cover_url": "/relative.png"}"#, "is not an absolute URL"),
            (#"{"title": "T", "artist": "X", "cover_url": "http://h/a.png", "id": "../../x"}"#, "is not a valid id"),
            (#"{"title": "T", "artist": "X", "cover_url": "http://h/a.png", "id": "."}"#, "is not a valid id"),
            (#"{"title": "T", "artist": "X", "cover_url": "http://h/a.png", "id": "/abs"}"#, "is not a valid id"),
            (#"{"title": "T", "artist": "X", "cover_url": "http://h/a.png", "year": true}"#, "'year' must be a string or an integer, found a boolean"),
            (#"{"title": "T", "artist": "X", "cover_url": "http://h/a.png", "year": 19.5}"#, "'year' must be a string or an integer, found a non-integer number"),
            (#"{"title": "T", "artist": "X", "cover_url": "http://h/a.png", "year": -1000000000000000000000000000000}"#,
             "'year' must be a string or an integer, found an integer out of range"),
            (#"{"title": "T\u0000", "artist": "X", "cover_url": "http://h/a.png"}"#, "contains control characters"),
            (#""just a string""#, "expected an album object, found a string"),
            (#"{"title": "T", "artist": "X", "mbid": "not-a-uuid"}"#, #"'mbid' "not-a-uuid" is not a MusicBrainz id"#),
            (#"{"title": "T", "artist": "X", "musicbrainz_releasegroupid": "0b3f0a5c-1e2d-4c3b-8a9f"}"#,
             "'musicbrainz_releasegroupid' \"0b3f0a5c-1e2d-4c3b-8a9f\" is not a MusicBrainz id"),
            (#"{"title": "T", "artist": "X", "release_group_mbid": 42}"#, "'release_group_mbid' must be a string, found an integer"),
          ])
    func badAlbumIsRejectedAlone(bad: String, reason: String) throws {
        let contents = try decode("[{\"title\": \"Good\", \"artist\": \"X\", \"cover_url\": \"http://h/g.png\"},\n\(bad)]")
        #expect(contents.albums.map(\.title) == ["Good"])
        let rejection = try #require(contents.rejections.first)
        #expect(rejection.position == "album 2 (line 2)")
        #expect(rejection.description.contains(reason), "\(rejection)")
        #expect(rejection.description.hasPrefix("/records/a.json: album 2"))
    }

    @Test("Given albums without cover_url, with MusicBrainz ids under either name and in any case, when decoded, then they load to be looked up, their ids lower-case")
    func albumsWithoutURLLoadForLookup() throws {
        let release = "0B3F0A5C-1E2D-4C3B-8A9F-00000000000A"
        let group = "0b3f0a5c-1e2d-4c3b-8a9f-00000000000b"
        let contents = try decode(#"""
            [{"title": "A", "artist": "X", "mbid": "\#(release)", "release_group_mbid": "\#(group)"},
             {"title": "B", "artist": "X", "musicbrainz_albumid": "\#(release.lowercased())", "musicbrainz_releasegroupid": null},
             {"title": "C", "artist": "X"}]
            """#)
        #expect(contents.rejections.isEmpty, "\(contents.rejections)")
        #expect(contents.albums.map(\.coverURL) == [nil, nil, nil])
        #expect(contents.albums.map { $0.releaseID?.rawValue } == [release.lowercased(), release.lowercased(), nil])
        #expect(contents.albums.map { $0.releaseGroupID?.rawValue } == [group, nil, nil])
    }

    @Test("Given lookups turned off, when an album without cover_url is decoded, then it is rejected as before")
    func coverURLRequiredWithoutLookups() throws {
        var limits = RecordLimits()
        limits.coverURLRequired = true
        let decoder = JSONRecordDecoder(validator: AlbumValidator(limits: limits))
        let contents = try decoder.decode(Array(#"[{"title": "A", "artist": "X", "mbid": "0b3f0a5c-1e2d-4c3b-8a9f-00000000000a"}]"#.utf8), record: "/r.json")
        #expect(contents.albums.isEmpty)
        #expect(contents.rejections.first?.description.contains("missing required field 'cover_url'") == true)
    }

    @Test("Given accepted albums, when decoded, then each knows its entry and line, and a single object says so")
    func acceptedAlbumsKnowTheirPosition() throws {
        // Given / When
        let list = try decode("[\n{\"title\": \"A\", \"artist\": \"X\", \"cover_url\": \"http://h/a.png\"},\n\n{\"title\": \"B\", \"artist\": \"X\", \"cover_url\": \"http://h/b.png\"}]")
        let single = try decode("\n\n{\"title\": \"C\", \"artist\": \"X\", \"cover_url\": \"http://h/c.png\"}")
        // Then
        #expect(list.albums.map(\.position) == ["album 1 (line 2)", "album 2 (line 4)"])
        #expect(single.albums.map(\.position) == ["album (line 3)"])
    }

    @Test("Given the positions that are not a JSON entry, when described, then each says where the album came from")
    func otherPositionsDescribeThemselves() {
        // Given / When / Then
        #expect(RecordPosition.entry(7).description == "album 7")
        #expect(RecordPosition.fromIndex.description == "from the index")
        #expect(RecordPosition.unspecified.description == "")
    }

    @Test("Given 1 MiB strings and 100 KB URLs, when decoded, then the albums are rejected as too long")
    func overlongValues() throws {
        let huge = String(repeating: "a", count: 1 << 20)
        let longURL = "http://h/" + String(repeating: "b", count: 100_000)
        let contents = try decode("[{\"title\": \"\(huge)\", \"artist\": \"X\", \"cover_url\": \"http://h/a\"}, {\"title\": \"T\", \"artist\": \"X\", \"cover_url\": \"\(longURL)\"}]")
        #expect(contents.albums.isEmpty)
        #expect(contents.rejections.count == 2)
        #expect(contents.rejections[0].error == .tooLong(field: "title", length: 1 << 20, limit: 1024))
    }

    @Test("Given text that is not JSON, when decoded, then the file error says where")
    func notJSON() {
        do throws(RecordFileError) {
            _ = try decoder.decode(Array("title: x\n".utf8), record: "/records/a.json")
            Issue.record("expected an error")
        } catch {
            #expect(error.description.contains("/records/a.json: not valid JSON"))
            #expect(error.description.contains("line 1"))
        }
    }

    @Test("Given an explicit id, when decoded, then it is used as given")
    func explicitID() throws {
        let contents = try decode(#"{"id": "bowie-1", "title": "T", "artist": "X", "cover_url": "http://h/a.png"}"#)
        #expect(contents.albums.first?.id.rawValue == "bowie-1")
    }
}

@Suite("Album ids")
struct AlbumIDTests {
    @Test("Given the same artist and title, when derived twice, then the ids are equal and valid")
    func derivedIsStable() {
        let first = AlbumID.derived(artist: "David Bowie", title: "Best of Bowie")
        let second = AlbumID.derived(artist: "David Bowie", title: "Best of Bowie")
        #expect(first == second)
        #expect(first.rawValue.hasPrefix("david-bowie-best-of-bowie-"))
        #expect(AlbumID.isValid(first.rawValue))
    }

    @Test("Given case, spacing and Unicode form differences, when derived, then the id is the same")
    func normalisation() {
        let composed = AlbumID.derived(artist: "Björk", title: "Homogenic")
        let decomposed = AlbumID.derived(artist: "Bjo\u{308}rk", title: "  homogenic ")
        #expect(composed == decomposed)
        #expect(composed.rawValue.hasPrefix("bjork-homogenic-"))
    }

    @Test("Given different albums, when derived, then ids differ")
    func distinct() {
        #expect(AlbumID.derived(artist: "A", title: "B C") != AlbumID.derived(artist: "A B", title: "C"))
        #expect(AlbumID.derived(artist: "X", title: "1") != AlbumID.derived(artist: "X", title: "2"))
    }

    @Test("Given a title with no Latin letters, when derived, then the id is the hash alone")
    func nonLatin() {
        let id = AlbumID.derived(artist: "坂本龍一", title: "音楽図鑑")
        #expect(id.rawValue.count == 12)
        #expect(AlbumID.isValid(id.rawValue))
    }

    @Test("Given path-like or malformed ids, when validated, then they are refused",
          arguments: ["", ".", "..", "../x", "/abs", "a/b", "-a", "_a", String(repeating: "a", count: 129), "a b", "é"])
    func invalidIDs(text: String) {
        #expect(!AlbumID.isValid(text))
    }

    @Test("Given well-formed ids, when validated, then they pass", arguments: ["a", "A.b_c-d", "0", String(repeating: "z", count: 128)])
    func validIDs(text: String) {
        #expect(AlbumID.isValid(text))
    }

    @Test("Given a record file over the size limit, when read, then it is refused unparsed with its size")
    func sizeLimit() throws {
        let directory = TestDirectory()
        var limits = RecordLimits()
        limits.maxFileBytes = 1024
        let path = directory.file("big.json")
        try writeAtomically(String(repeating: " ", count: 2000) + "[]", to: path)
        #expect(throws: RecordFileError.tooLarge(path: path, size: 2002, limit: 1024)) {
            try RecordFileReader(limits: limits).read(path, kind: .json)
        }
    }
}
