@testable import CoverdCache
@testable import CoverdModel
@testable import CoverdSync
import Foundation
import Testing

/// The planner's side of the check after the first scan: cached rows taken on
/// the index's word, the stamps that single some out, and the verdicts on those.
@Suite("Covers taken as cached on the index's word")
struct UncheckedCoverTests {
    let now = Date(timeIntervalSince1970: 1_000_000)
    let files = FakeCoverFiles()
    /// The planner's steps run against `files`, as the coordinator runs them against the disk.
    var steps: CoverFileSteps<FakeCoverFiles> { CoverFileSteps(files: files) }
    var planner = SyncPlanner(policy: RetryPolicy(), paths: CoverPaths(directory: "/cache/covers"), random: { 0.5 })
    let indexed = FileStamp(bytes: 10, mtime: 1)
    let touched = FileStamp(bytes: 11, mtime: 2)

    func album(_ id: String, _ url: String? = nil) throws -> Album {
        Album(id: AlbumID(trusted: id), title: "T", artist: "A", coverURL: try CoverURL(validating: url ?? "http://h/\(id).png"), record: "/r/a.json")
    }

    /// Loads a cached row with the `indexed` stamp for each album, and has the first scan see them.
    mutating func seeCached(_ albums: [Album]) -> [SyncEffect] {
        planner.load(albums.map { album in
            var row = IndexRow(album: album, state: .cached, updatedAt: now)
            row.bytes = indexed.bytes
            row.fileMTime = indexed.mtime
            row.checkedAt = now  // As every cached row of index version 4 has it.
            return row
        })
        return steps.update(albums, on: &planner, now: now)
    }

    @Test("Given a cached row with its file's stamp, when the first scan sees its album, then it is cached without a look at the disk and listed once for the check")
    mutating func cachedOnTheIndexsWord() throws {
        // Given: no file at all on the (fake) disk
        let x = try album("x")
        // When
        let effects = seeCached([x])
        // Then
        #expect(files.checked.isEmpty)
        #expect(effects.fetches.isEmpty)
        #expect(effects.rows.isEmpty)
        #expect(planner.summary == SyncSummary(albums: 1, cached: 1, pending: 0, failed: 0))
        #expect(planner.takeUnchecked() == [x.id])
        #expect(planner.takeUnchecked().isEmpty)
    }

    @Test("Given covers taken as cached and one album gone, when their stamps are compared, then those gone or changed differ and only albums still cached count")
    mutating func stampsSingleOut() throws {
        // Given
        let albums = try ["same", "gone", "touched", "withdrawn"].map { try album($0) }
        _ = seeCached(albums)
        _ = steps.withdraw([albums[3].id], on: &planner, now: now)
        // When
        let found = planner.differing(albums.map(\.id), found: [indexed, nil, touched, nil])
        // Then
        #expect(found.ids.map(\.rawValue) == ["gone", "touched"])
        #expect(found.compared == 3)
        #expect(files.checked.isEmpty)
    }

    @Test("Given verdicts on covers taken as cached (gone, changed but valid, corrupt, over the limits) that still stand, when settled, then no file is read again, the valid one keeps its new stamp, the others are fetched again in one report, and only the corrupt file is deleted")
    mutating func verdictsDecide() throws {
        // Given: each file still as it was read
        let albums = try ["gone", "touched", "corrupt", "large"].map { try album($0) }
        _ = seeCached(albums)
        for album in albums.dropFirst() { files.files[album.id] = touched }
        let verdicts = [
            CoverVerdict(.missing, stamp: nil), CoverVerdict(.valid(touched), stamp: touched),
            CoverVerdict(.invalid("bad CRC"), stamp: touched), CoverVerdict(.unusable("beyond the image limits"), stamp: touched),
        ]

        // When
        let result = steps.settleChecked(albums.map(\.id), verdicts: verdicts, on: &planner, now: now)

        // Then
        #expect(files.checked.isEmpty)
        #expect(result.lost == 3)
        #expect(result.effects.fetches.map(\.1.string) == ["http://h/gone.png", "http://h/corrupt.png", "http://h/large.png"])
        let reports = result.effects.posted(CachedCoversLost.self)
        #expect(reports.count == 1)
        #expect(reports.first?.covers.map(\.album.id.rawValue) == ["gone", "corrupt", "large"])
        #expect(reports.first?.covers.map(\.reason) == [
            "cached cover was missing", "cached cover was corrupt: bad CRC", "cached cover could not be used: beyond the image limits",
        ])
        #expect(reports.first?.covers.first?.path == "/cache/covers/gone.png")
        #expect(files.removed == [albums[2].id])
        let rows = result.effects.rows
        #expect(rows.map(\.id.rawValue) == ["gone", "touched", "corrupt", "large"])
        #expect(rows.map(\.state) == [.pending, .cached, .pending, .pending])
        #expect(rows[1].bytes == 11 && rows[1].fileMTime == 2)
        #expect(rows[0].error == "cached cover was missing")
        #expect(planner.summary == SyncSummary(albums: 4, cached: 1, pending: 3, failed: 0))
    }

    @Test("Given a verdict on a file that changed after it was read (back as the planner holds it), when settled, then the file is checked again and nothing is lost or written")
    mutating func verdictOnAFileChangedSince() throws {
        // Given: read while missing, back (with the stamp the planner holds) before the decision
        let x = try album("x")
        _ = seeCached([x])
        files.files[x.id] = indexed
        // When
        let result = steps.settleChecked([x.id], verdicts: [CoverVerdict(.missing, stamp: nil)], on: &planner, now: now)
        // Then
        #expect(files.checked == [x.id])
        #expect(result.lost == 0)
        #expect(result.effects.isEmpty)
    }

    @Test("Given a cover taken as cached whose album moved to another URL, when a stale verdict comes, then nothing more happens")
    mutating func changedMeanwhileIsLeftAlone() throws {
        // Given
        let x = try album("x")
        _ = seeCached([x])
        let moved = steps.update([try album("x", "http://h/other.png")], on: &planner, now: now)
        #expect(moved.fetches.count == 1)
        // When
        let result = steps.settleChecked([x.id], verdicts: [CoverVerdict(.missing, stamp: nil)], on: &planner, now: now)
        // Then
        #expect(result.effects.isEmpty)
        #expect(result.lost == 0)
    }

    @Test("Given a reload's check that found a cover missing, when the first scan's verdict on it comes, then it is not reported twice")
    mutating func reloadDuringTheCheck() throws {
        // Given
        let x = try album("x")
        _ = seeCached([x])
        let reload = planner.retryAll(now: now)
        #expect(reload.cached == [x.id])
        let lost = steps.settleChecked([x.id], verdicts: [CoverVerdict(.missing, stamp: nil)], on: &planner, now: now)
        #expect(lost.effects.posted(CachedCoversLost.self).flatMap(\.covers).map(\.album.id) == [x.id])
        // When
        let result = steps.settleChecked([x.id], verdicts: [CoverVerdict(.missing, stamp: nil)], on: &planner, now: now)
        // Then
        #expect(result.effects.isEmpty)
        #expect(planner.differing([x.id], found: [nil]).compared == 0)
    }

    @Test("Given a reload with one cover flagged by verify and one untouched, when their stamps are compared, then only the flagged one is read, however its stamp")
    mutating func flaggedCoversAreReadOnReload() throws {
        // Given
        let albums = try ["flagged", "untouched"].map { try album($0) }
        _ = seeCached(albums)
        let reload = planner.retryAll(now: now)
        // When
        let found = planner.differing(reload.cached, found: [indexed, indexed], flagged: [albums[0].id])
        // Then
        #expect(Set(reload.cached) == Set(albums.map(\.id)))
        #expect(reload.effects.isEmpty)
        #expect(found.ids == [albums[0].id])
        #expect(found.compared == 2)
    }

    @Test("Given a flagged cover found valid on reload, when settled, then its row is written again (clearing verify's mark) and nothing is fetched")
    mutating func flaggedButValidIsRewritten() throws {
        // Given
        let x = try album("x")
        _ = seeCached([x])
        files.files[x.id] = indexed
        // When
        let result = steps.settleChecked([x.id], verdicts: [CoverVerdict(.valid(indexed), stamp: indexed)], flagged: [x.id], on: &planner, now: now)
        // Then
        #expect(result.lost == 0)
        #expect(result.effects.rows.map(\.id) == [x.id])
        #expect(result.effects.rows.first?.state == .cached)
        #expect(result.effects.fetches.isEmpty)
    }

    @Test("Given a cached row without a stamp, when the first scan sees its album, then the disk is asked at once and it is not listed for the check")
    mutating func rowWithoutStampIsCheckedAtOnce() throws {
        // Given
        let x = try album("x")
        planner.load([IndexRow(album: x, state: .cached, updatedAt: now)])
        // When
        let effects = steps.update([x], on: &planner, now: now)
        // Then
        #expect(files.checked == [x.id])
        #expect(effects.fetches.count == 1)
        #expect(planner.takeUnchecked().isEmpty)
    }
}
