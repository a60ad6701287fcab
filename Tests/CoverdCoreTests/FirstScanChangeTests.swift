@testable import CoverdCore
import Testing

/// The first scan (a catalog that starts empty) keeps its change as a plain
/// list of additions; it must come to the same albums as the per-id change.
@Suite("First scan change")
struct FirstScanChangeTests {
    func album(_ id: String, record: String, url: String = "http://h/a.png") throws -> Album {
        Album(id: try AlbumID(validating: id), title: "T", artist: "A", coverURL: try CoverURL(validating: url), record: record)
    }

    @Test func givenAnEmptyCatalogWhenALaterFileOverridesAnIdThenOnlyTheWinnersAreUpsertedOnce() throws {
        // Given: b.json is read before a.json, which sorts first and so wins "x"
        let files: [(String, [Album])] = [
            ("/r/b.json", [try album("x", record: "/r/b.json", url: "http://h/b.png"), try album("y", record: "/r/b.json")]),
            ("/r/a.json", [try album("x", record: "/r/a.json", url: "http://h/a.png"), try album("z", record: "/r/a.json")]),
        ]
        var catalog = RecordCatalog()
        var fresh = CatalogChange(fromEmptyCatalog: true)
        var reference = RecordCatalog()
        var perID = CatalogChange()
        // When
        for (path, albums) in files {
            fresh.merge(catalog.update(path: path, albums: albums))
            perID.merge(reference.update(path: path, albums: albums))
        }
        fresh.keepWinners { catalog.album($0) }
        // Then
        #expect(fresh.upserted.map(\.id.rawValue) == ["y", "x", "z"])
        #expect(fresh.upserted.first { $0.id.rawValue == "x" }?.record == "/r/a.json")
        #expect(Set(fresh.upserted.map(\.record)) == Set(perID.upserted.map(\.record)))
        #expect(fresh.upserted.count == perID.upserted.count)
        #expect(fresh.removed.isEmpty)
        #expect(fresh.duplicates == perID.duplicates)
        #expect(fresh.duplicates.count == 1)
    }

    @Test func givenAnEmptyCatalogWhenNothingIsReadThenTheChangeIsEmpty() {
        // Given
        var change = CatalogChange(fromEmptyCatalog: true)
        // When
        change.keepWinners { _ in nil }
        // Then
        #expect(change.isEmpty)
    }
}
