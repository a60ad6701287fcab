import CoverdCore
import Testing

@Suite("Record catalog")
struct RecordCatalogTests {
    func album(_ id: String, url: String = "http://h/a.png", record: String, title: String = "T") throws -> Album {
        Album(id: try AlbumID(validating: id), title: title, artist: "A", coverURL: try CoverURL(validating: url), record: record)
    }

    @Test("Given a new file, when added, then its albums are upserted")
    func addFile() throws {
        var catalog = RecordCatalog()
        let change = catalog.update(path: "/r/a.json", albums: [try album("x", record: "/r/a.json"), try album("y", record: "/r/a.json")])
        #expect(change.upserted.map(\.id.rawValue) == ["x", "y"])
        #expect(change.removed.isEmpty)
        #expect(catalog.albumCount == 2)
    }

    @Test("Given the same id in two files, when both load, then the first path wins with a warning, whatever the order")
    func duplicatesResolveDeterministically() throws {
        for order in [["/r/a.json", "/r/b.json"], ["/r/b.json", "/r/a.json"]] {
            var catalog = RecordCatalog()
            var duplicates: [DuplicateAlbum] = []
            for path in order {
                duplicates += catalog.update(path: path, albums: [try album("x", record: path, title: path)]).duplicates
            }
            #expect(catalog.album(try AlbumID(validating: "x"))?.record == "/r/a.json")
            #expect(duplicates.count == 1)
            #expect(duplicates.first?.kept.hasPrefix("/r/a.json") == true)
        }
    }

    @Test("Given a duplicate winner deleted, when removed, then the other file's album takes over without a removal")
    func loserTakesOver() throws {
        var catalog = RecordCatalog()
        _ = catalog.update(path: "/r/a.json", albums: [try album("x", record: "/r/a.json")])
        _ = catalog.update(path: "/r/b.json", albums: [try album("x", record: "/r/b.json")])
        let change = catalog.remove(path: "/r/a.json")
        #expect(change.removed.isEmpty)
        #expect(change.upserted.map(\.record) == ["/r/b.json"])
    }

    @Test("Given a file rewritten without one album, when updated, then that album is removed")
    func albumDropped() throws {
        var catalog = RecordCatalog()
        _ = catalog.update(path: "/r/a.json", albums: [try album("x", record: "/r/a.json"), try album("y", record: "/r/a.json")])
        let change = catalog.update(path: "/r/a.json", albums: [try album("x", record: "/r/a.json")])
        #expect(change.removed.map(\.id.rawValue) == ["y"])
        #expect(change.upserted.isEmpty)
    }

    @Test("Given a rename folded into one change, when merged, then the album is only moved")
    func renameIsNetMove() throws {
        var catalog = RecordCatalog()
        _ = catalog.update(path: "/r/a.json", albums: [try album("x", record: "/r/a.json")])
        var change = catalog.remove(path: "/r/a.json")
        change.merge(catalog.update(path: "/r/b.json", albums: [try album("x", record: "/r/b.json")]))
        #expect(change.removed.isEmpty)
        #expect(change.upserted.map(\.record) == ["/r/b.json"])
    }

    @Test("Given an album removed and added back unchanged in one batch, when merged, then nothing changed")
    func removeAndRestoreIsNoChange() throws {
        var catalog = RecordCatalog()
        _ = catalog.update(path: "/r/a.json", albums: [try album("x", record: "/r/a.json")])
        var change = catalog.remove(path: "/r/a.json")
        change.merge(catalog.update(path: "/r/a.json", albums: [try album("x", record: "/r/a.json")]))
        #expect(change.isEmpty)
    }

    @Test("Given the same id twice in one file, when loaded, then the first entry wins with a warning")
    func duplicateWithinFile() throws {
        var catalog = RecordCatalog()
        let change = catalog.update(path: "/r/a.json", albums: [try album("x", record: "/r/a.json", title: "first"), try album("x", record: "/r/a.json", title: "second")])
        #expect(change.upserted.map(\.title) == ["first"])
        #expect(change.duplicates.count == 1)
    }

    @Test("Given a directory removed, when forgotten, then every album under it goes")
    func removeDirectory() throws {
        var catalog = RecordCatalog()
        _ = catalog.update(path: "/r/sub/a.json", albums: [try album("x", record: "/r/sub/a.json")])
        _ = catalog.update(path: "/r/subway.json", albums: [try album("y", record: "/r/subway.json")])
        let change = catalog.remove(under: "/r/sub")
        #expect(change.removed.map(\.id.rawValue) == ["x"])
        #expect(catalog.albumCount == 1)
    }
}
