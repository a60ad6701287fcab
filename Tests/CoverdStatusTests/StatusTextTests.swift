@testable import CoverdBase
@testable import CoverdCache
@testable import CoverdModel
@testable import CoverdStatus
import CoverdTestSupport
import Foundation
import Testing

@Suite("Status report")
struct StatusTextTests {
    let directory = TestDirectory()

    @Test("Given an index, when the status report is rendered, then the JSON has exactly the contract's keys and nulls")
    func statusJSON() throws {
        let index = try CoverIndex(cacheDirectory: directory.path)
        let album = Album(id: try AlbumID(validating: "x"), title: "T\n", artist: "A", coverURL: try CoverURL(validating: "http://h/a.png"), record: "/r/a.json")
        try index.apply([.upsert(IndexRow(album: album, state: .cached, updatedAt: Date()))])
        let report = try StatusReport.load(cacheDirectory: directory.path)
        let snapshot = try StatusSnapshot(json: StatusText(report).json())
        #expect(snapshot.albums == 1 && snapshot.cached == 1 && snapshot.pending == 0 && snapshot.failed == 0)
        #expect(snapshot.keys == [[
            "id", "title", "artist", "cover_url", "state", "path", "error", "record", "source", "mbid", "release_group_mbid", "resolved_url",
            "outdated", "checked_at",
        ]])
        #expect(snapshot.outdated == 0 && snapshot.entries.first?.outdated == false)
        #expect(snapshot.entries.first?.path == directory.path + "/covers/x.png")
        #expect(snapshot.entries.first?.error == nil)
        #expect(snapshot.entries.first?.title == "T\n")
        #expect(StatusText(report).table().hasPrefix("1 albums: 1 cached, 0 pending, 0 failed\n"))
    }

    @Test("Given an id at the contract's 128-character limit, when the status table is rendered, then every id is shown whole")
    func tableShowsWholeIDs() throws {
        let long = "a" + String(repeating: "b", count: 126) + "c"
        let rows = try [long, "short"].map { id in
            IndexRow(album: Album(id: try AlbumID(validating: id), title: "T", artist: "A", coverURL: try CoverURL(validating: "http://h/a.png"), record: "/r/a.json"),
                     state: .cached, updatedAt: Date())
        }
        let lines = StatusText(StatusReport(rows: rows, coversDirectory: "/c")).table().split(separator: "\n")
        #expect(lines.contains { $0.hasPrefix("cached   \(long)  A – T") }, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("cached   short" + String(repeating: " ", count: 48 - 5) + "  A – T") }, "\(lines)")
    }

    @Test("Given a cache directory whose name needs escaping, when the status is rendered as JSON, then each path parses back whole")
    func statusJSONEscapedPaths() throws {
        let cache = directory.path + "/odd \"dir\" \\ \u{2028}"
        try makeDirectories(cache)
        let index = try CoverIndex(cacheDirectory: cache)
        let url = try CoverURL(validating: "http://h/a.png")
        let cached = Album(id: try AlbumID(validating: "x"), title: "T", artist: "A", coverURL: url, record: "/r/a.json")
        let pending = Album(id: try AlbumID(validating: "y"), title: "T", artist: "A", coverURL: url, record: "/r/\"b\".json")
        try index.apply([
            .upsert(IndexRow(album: cached, state: .cached, updatedAt: Date())),
            .upsert(IndexRow(album: pending, state: .pending, updatedAt: Date())),
        ])
        let report = try StatusReport.load(cacheDirectory: cache)
        let snapshot = try StatusSnapshot(json: StatusText(report).json())
        #expect(snapshot.album("x")?.path == cache + "/covers/x.png")
        #expect(snapshot.album("y")?.path == nil)
        #expect(snapshot.album("y")?.record == "/r/\"b\".json")
        #expect(StatusText(report).jsonBytes() == Array(StatusText(report).json().utf8))
    }

    @Test("Given no index yet, when status is read, then it is empty rather than an error")
    func emptyStatus() throws {
        let report = try StatusReport.load(cacheDirectory: directory.path + "/none")
        #expect(report.summary == SyncSummary())
        #expect(try StatusSnapshot(json: StatusText(report).json()).albums == 0)
    }

    @Test("Given cached covers confirmed long ago, recently, or marked for revalidation, and a pending album, when status is rendered, then outdated and checked_at say so")
    func outdatedAndCheckedAt() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        func row(_ id: String, _ state: CoverState, checked: TimeInterval?, refresh: RefreshMark? = nil) throws -> IndexRow {
            let album = Album(id: try AlbumID(validating: id), title: "T", artist: "A", coverURL: try CoverURL(validating: "http://h/\(id).png"), record: "/r/a.json")
            var row = IndexRow(album: album, state: state, updatedAt: now.addingTimeInterval(-5))
            row.checkedAt = checked.map { now.addingTimeInterval(-$0) }
            row.refresh = refresh
            return row
        }
        var report = StatusReport(
            rows: [try row("old", .cached, checked: 100), try row("new", .cached, checked: 10), try row("marked", .cached, checked: 1, refresh: .revalidate),
                   try row("waiting", .pending, checked: nil)],
            coversDirectory: "/c")
        report.maxAge = .seconds(60)
        report.now = now

        // When
        let snapshot = try StatusSnapshot(json: StatusText(report).json())

        // Then
        #expect(snapshot.outdated == 2)
        #expect(snapshot.album("old")?.outdated == true && snapshot.album("marked")?.outdated == true)
        #expect(snapshot.album("new")?.outdated == false && snapshot.album("waiting")?.outdated == false)
        #expect(snapshot.album("new")?.checkedAt == "2027-01-15T07:59:50Z")
        #expect(snapshot.album("waiting")?.checkedAt == nil)
        #expect(StatusText(report).table().contains("; 2 outdated"))
        #expect(StatusText(report).table().contains("cached*  old"))
        report.maxAge = .zero
        #expect(try StatusSnapshot(json: StatusText(report).json()).outdated == 1, "max_age 0: only the marked one")
    }
}
