@testable import CoverdCache
@testable import CoverdFetch
@testable import CoverdModel
@testable import CoverdSync
import Foundation
import Testing

/// The planner's own entry points, without the steps that run them against
/// files: what it asks to have looked at, and what it decides from the answers.
@Suite("Sync planner, pure")
struct SyncPlannerPureTests {
    let now = Date(timeIntervalSince1970: 1_000_000)
    var planner = SyncPlanner(policy: RetryPolicy(), paths: CoverPaths(directory: "/cache/covers"), random: { 0.5 })

    func album(_ id: String, _ url: String = "http://h/a.png") throws -> Album {
        Album(id: try AlbumID(validating: id), title: "T", artist: "A", coverURL: try CoverURL(validating: url), record: "/r/a.json")
    }

    @Test("Given a fully cached library from the index, each row with its file's stamp, when the first scan sees every album, then no file is named to look at")
    mutating func cachedLibraryNamesNoFile() throws {
        let albums = try (0..<50).map { try album("a\($0)", "http://h/\($0).png") }
        planner.load(albums.map { album in
            var row = IndexRow(album: album, state: .cached, updatedAt: now)
            row.bytes = 10
            row.fileMTime = 1
            return row
        })

        #expect(planner.coversToCheck(before: albums).isEmpty)
    }

    @Test("Given a pending row and a cached row without a stamp, when their albums are seen, then both files are named, the cached one with the row it should match")
    mutating func rowsThatMayHaveAFileAreNamed() throws {
        let pending = try album("p", "http://h/p.png"), unstamped = try album("u", "http://h/u.png")
        planner.load([IndexRow(album: pending, state: .pending, updatedAt: now), IndexRow(album: unstamped, state: .cached, updatedAt: now)])

        let checks = planner.coversToCheck(before: [pending, unstamped])

        #expect(checks.map(\.id) == [pending.id, unstamped.id])
        #expect(checks[0].expected == nil && checks[1].expected?.id == unstamped.id)
    }

    @Test("Given staged covers for a job that was cancelled meanwhile, when reported, then none is to be committed and each comes back as a discard")
    mutating func staleStagingIsDiscarded() throws {
        let x = try album("x")
        let fetch = try #require(planner.update([x], checks: [:], now: now).fetches.first)
        let body = FetchedBody(bytes: [1], httpStatus: 200, effectiveURL: "", duration: .zero)
        let stage = try #require(planner.fetchFinished(fetch.0, url: fetch.1, outcome: .success(body), now: now).stages.first)
        _ = planner.withdraw([x.id], now: now)
        let temporary = TemporaryCover(path: "/cache/incoming/.x.tmp", bytes: 1, stamp: FileStamp(bytes: 1, mtime: 1))
        let staged = StagedCovers(temporaries: [x.id: temporary], bytes: 1, httpStatus: 200, duration: .zero)

        #expect(planner.temporariesToCommit(stage.fetchID, job: stage.job, staged: staged).isEmpty)
        let effects = planner.committed(stage.fetchID, job: stage.job, staged: staged, renamed: [:], now: now)
        #expect(effects.count == 1)
        guard case .discard(let discarded)? = effects.first else { Issue.record("no discard: \(effects)"); return }
        #expect(discarded.path == temporary.path)
    }

    @Test("Given no job waiting for room, when the timer fires, then the planner does not need the free space measured")
    mutating func freeSpaceOnlyWhenAJobWaitsForRoom() throws {
        let fetch = try #require(planner.update([try album("x")], checks: [:], now: now).fetches.first)
        _ = planner.fetchFinished(fetch.0, url: fetch.1, outcome: .failure(FetchFailure(kind: .timeout, message: "timed out")), now: now)
        #expect(!planner.needsFreeSpace(now: now.addingTimeInterval(3600)))
    }
}
