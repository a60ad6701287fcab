@testable import CoverdModel
@testable import CoverdRecords
import CoverdTestSupport
import Foundation
import Testing

/// The first scan (a catalog that starts empty) keeps its change in the
/// additions form; it must come to exactly what the per-id form does.
@Suite("First scan change")
struct FirstScanChangeTests {
    func album(_ id: String, record: String, url: String = "http://h/a.png") throws -> Album {
        Album(id: try AlbumID(validating: id), title: "T", artist: "A", coverURL: try CoverURL(validating: url), record: record)
    }

    /// Folds `steps` into an additions-form change and a per-id change over two catalogs.
    func both(_ steps: [(inout RecordCatalog) -> CatalogChange]) -> (additions: CatalogChange, perID: CatalogChange) {
        var catalog = RecordCatalog()
        var reference = RecordCatalog()
        var additions = CatalogChange.additionsToEmptyCatalog()
        var perID = CatalogChange()
        for step in steps {
            additions.merge(step(&catalog))
            perID.merge(step(&reference))
        }
        additions.keepWinners { catalog.album($0) }
        return (additions, perID)
    }

    @Test func givenALaterFileThatOverridesAnIdWhenResolvedThenTheWinnerKeepsTheIdsFirstPlace() throws {
        // Given: b.json is read before a.json, which sorts first and so wins "x"
        let b = [try album("x", record: "/r/b.json", url: "http://h/b.png"), try album("y", record: "/r/b.json")]
        let a = [try album("x", record: "/r/a.json", url: "http://h/a.png"), try album("z", record: "/r/a.json")]
        // When
        let (additions, perID) = both([{ $0.update(path: "/r/b.json", albums: b) }, { $0.update(path: "/r/a.json", albums: a) }])
        // Then
        #expect(additions.upserted.map(\.id.rawValue) == ["x", "y", "z"])
        #expect(additions.upserted.first?.record == "/r/a.json")
        #expect(additions.upserted == perID.upserted)
        #expect(additions.removed.isEmpty)
        #expect(additions.duplicates.count == 1)
        #expect(additions == perID)
    }

    @Test func givenAFileAddedRemovedAndAddedBackWhenResolvedThenEachAlbumIsUpsertedOnce() throws {
        // Given
        let first = [try album("x", record: "/r/a.json"), try album("y", record: "/r/a.json")]
        let second = [try album("y", record: "/r/c.json"), try album("x", record: "/r/c.json")]
        // When
        let (additions, perID) = both([
            { $0.update(path: "/r/a.json", albums: first) }, { $0.remove(path: "/r/a.json") },
            { $0.update(path: "/r/c.json", albums: second) },
        ])
        // Then
        #expect(additions.upserted.map(\.record) == ["/r/c.json", "/r/c.json"])
        #expect(additions.upserted.map(\.id.rawValue) == ["x", "y"])
        #expect(additions.removed.isEmpty)
        #expect(additions == perID)
    }

    @Test func givenAnIdThatAppearsAndGoesAwayWhenResolvedThenItIsNotUpserted() throws {
        // Given
        let first = [try album("x", record: "/r/a.json"), try album("y", record: "/r/a.json")]
        let second = [try album("y", record: "/r/c.json")]
        // When
        let (additions, perID) = both([
            { $0.update(path: "/r/a.json", albums: first) }, { $0.remove(path: "/r/a.json") },
            { $0.update(path: "/r/c.json", albums: second) },
        ])
        // Then
        #expect(additions.upserted.map(\.id.rawValue) == ["y"])
        #expect(additions.upserted.first?.record == "/r/c.json")
        #expect(additions == perID)
    }

    @Test func givenANestedFileAndASiblingWithTheSameIdWhenTheTreeIsScannedThenTheFirstPathWinsInItsPlace() throws {
        // Given: "a/x.json" is listed before "a.json", yet "/…/a.json" sorts first
        let directory = TestDirectory()
        let url = { (name: String) in "http://h/\(name).png" }
        try writeAtomically(#"[{"id": "x", "title": "T", "artist": "A", "cover_url": "\#(url("nested"))"}, {"id": "y", "title": "T", "artist": "A", "cover_url": "\#(url("y"))"}]"#, to: directory.sub("a") + "/x.json")
        try writeAtomically(#"[{"id": "x", "title": "T", "artist": "A", "cover_url": "\#(url("sibling"))"}]"#, to: directory.file("a.json"))
        var tree = try RecordTree(root: directory.path, reader: RecordFileReader(limits: RecordLimits()))
        // When
        var output = RecordTreeOutput()
        tree.scan(force: false, into: &output)
        // Then
        let upserted = output.change.upserted
        #expect(upserted.map(\.id.rawValue) == ["x", "y"])
        #expect(upserted.first { $0.id.rawValue == "x" }?.coverURL?.string == url("sibling"))
        #expect(Set(upserted.map(\.id.rawValue)) == ["x", "y"])
        #expect(output.change.duplicates.count == 1)
        #expect(tree.catalog.albumCount == 2)
    }

    @Test func givenEveryFileDeletedWhenRescannedTwiceThenAlbumsGoAndComeBack() throws {
        // Given
        let directory = TestDirectory()
        let path = directory.file("a.json")
        try writeAtomically(#"{"id": "x", "title": "T", "artist": "A", "cover_url": "http://h/x.png"}"#, to: path)
        var tree = try RecordTree(root: directory.path, reader: RecordFileReader(limits: RecordLimits()))
        var first = RecordTreeOutput()
        tree.scan(force: false, into: &first)
        #expect(first.change.upserted.map(\.id.rawValue) == ["x"])
        // When: the file goes, a reload scans; it comes back, another reload scans
        unlink(path)
        var emptied = RecordTreeOutput()
        tree.scan(force: true, into: &emptied)
        try writeAtomically(#"{"id": "x", "title": "T2", "artist": "A", "cover_url": "http://h/x.png"}"#, to: path)
        var refilled = RecordTreeOutput()
        tree.scan(force: true, into: &refilled)
        // Then
        #expect(emptied.change.removed.map(\.id.rawValue) == ["x"])
        #expect(emptied.change.upserted.isEmpty)
        #expect(refilled.change.upserted.map(\.title) == ["T2"])
        #expect(refilled.change.removed.isEmpty)
    }
}
