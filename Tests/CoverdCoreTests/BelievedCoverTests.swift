@testable import CoverdCore
import Foundation
import Testing

/// The planner's side of the check after the first scan: cached rows taken on
/// the index's word, and what the disk's stamps then decide.
@Suite("Covers believed cached")
struct BelievedCoverTests {
    let now = Date(timeIntervalSince1970: 1_000_000)
    let files = FakeCoverFiles()
    var planner = SyncPlanner(policy: RetryPolicy(), random: { 0.5 })
    let believed = FileStamp(bytes: 10, mtime: 1)

    func album(_ id: String, _ url: String? = nil) throws -> Album {
        Album(id: AlbumID(trusted: id), title: "T", artist: "A", coverURL: try CoverURL(validating: url ?? "http://h/\(id).png"), record: "/r/a.json")
    }

    /// Loads a cached row with the `believed` stamp for each album, and has the first scan see them.
    mutating func believe(_ albums: [Album]) -> [SyncEffect] {
        planner.load(albums.map { album in
            var row = IndexRow(album: album, state: .cached, updatedAt: now)
            row.bytes = believed.bytes
            row.fileMTime = believed.mtime
            return row
        })
        return planner.update(albums, now: now, files: files)
    }

    @Test("Given a cached row with its file's stamp, when the first scan sees its album, then it is cached without a look at the disk and listed once for the check")
    mutating func cachedOnTheIndexsWord() throws {
        // Given: no file at all on the (fake) disk
        let x = try album("x")
        // When
        let effects = believe([x])
        // Then
        #expect(files.checked.isEmpty)
        #expect(effects.fetches.isEmpty)
        #expect(effects.rows.isEmpty)
        #expect(planner.summary == SyncSummary(albums: 1, cached: 1, pending: 0, failed: 0))
        #expect(planner.takeUnchecked() == [x.id])
        #expect(planner.takeUnchecked().isEmpty)
    }

    @Test("Given covers believed cached, when the disk's stamps come (the same, gone, changed but valid, changed and corrupt), then only the gone and the corrupt are fetched again and reported")
    mutating func stampsDecide() throws {
        // Given
        let albums = try ["same", "gone", "touched", "corrupt"].map { try album($0) }
        _ = believe(albums)
        let touched = FileStamp(bytes: 11, mtime: 2)
        files.files[albums[0].id] = believed
        files.files[albums[2].id] = touched
        files.files[albums[3].id] = touched
        files.invalid = [albums[3].id]

        // When
        let result = planner.checkCached(albums.map(\.id), stamps: [believed, nil, touched, touched], now: now, files: files)

        // Then
        #expect(files.checked.map(\.rawValue) == ["gone", "touched", "corrupt"])
        #expect(result.lost == 2)
        #expect(result.effects.fetches.map(\.1.string) == ["http://h/gone.png", "http://h/corrupt.png"])
        let lost = result.effects.posted(CachedCoverLost.self)
        #expect(lost.map(\.album.id.rawValue) == ["gone", "corrupt"])
        #expect(lost.map(\.reason) == ["was missing", "was corrupt: bad CRC"])
        #expect(lost.first?.path == "/cache/covers/gone.png")
        let rows = result.effects.rows
        #expect(rows.map(\.id.rawValue) == ["gone", "touched", "corrupt"])
        #expect(rows.map(\.state) == [.pending, .cached, .pending])
        #expect(rows[1].bytes == 11 && rows[1].fileMTime == 2)
        #expect(rows[0].error == "cached cover was missing")
        #expect(planner.summary == SyncSummary(albums: 4, cached: 2, pending: 2, failed: 0))
    }

    @Test("Given a cover believed cached whose album moved to another URL before its check, when the stale stamp comes, then nothing more happens")
    mutating func changedMeanwhileIsLeftAlone() throws {
        // Given
        let x = try album("x")
        _ = believe([x])
        let moved = planner.update([try album("x", "http://h/other.png")], now: now, files: files)
        #expect(moved.fetches.count == 1)

        // When
        let result = planner.checkCached([x.id], stamps: [nil], now: now, files: files)

        // Then
        #expect(result.effects.isEmpty)
        #expect(result.lost == 0)
    }

    @Test("Given a cached row without a stamp, when the first scan sees its album, then the disk is asked at once and it is not listed for the check")
    mutating func rowWithoutStampIsCheckedAtOnce() throws {
        let x = try album("x")
        planner.load([IndexRow(album: x, state: .cached, updatedAt: now)])
        let effects = planner.update([x], now: now, files: files)
        #expect(files.checked == [x.id])
        #expect(effects.fetches.count == 1)
        #expect(planner.takeUnchecked().isEmpty)
    }
}
