@testable import CoverdBase
@testable import CoverdCache
@testable import CoverdFetch
@testable import CoverdLookup
@testable import CoverdModel
@testable import CoverdRecords
@testable import CoverdSync
import Foundation
import Testing

@Suite("Sync planner: covers kept for removed albums")
struct KeptCoversTests {
    let now = Date(timeIntervalSince1970: 1_000_000)
    let week: TimeInterval = 604_800
    let files = FakeCoverFiles()
    var steps: CoverFileSteps<FakeCoverFiles> { CoverFileSteps(files: files) }
    /// Freshness off (max_age 0): the wake-ups here are the kept covers' purges alone.
    var planner = SyncPlanner(policy: RetryPolicy(), paths: CoverPaths(directory: "/cache/covers"), maxAge: .zero, random: { 0.5 })

    func album(_ id: String, _ url: String = "http://h/a.png") throws -> Album {
        Album(id: try AlbumID(validating: id), title: "T", artist: "A", coverURL: try CoverURL(validating: url), record: "/r/a.json")
    }

    /// `album` cached on the index's word, its file there, as after a warm start.
    mutating func cached(_ album: Album) {
        var row = IndexRow(album: album, state: .cached, updatedAt: now)
        row.bytes = 100
        row.fileMTime = 1
        planner.load([row])
        files.files[album.id] = FileStamp(bytes: 100, mtime: 1)
        _ = steps.update([album], on: &planner, now: now)
    }

    @Test("Given a cached album, when its record goes, then its cover is moved aside, its row kept with when it left, and the log told until when")
    mutating func withdrawnCoverIsKept() throws {
        let x = try album("x")
        cached(x)

        // When
        let effects = steps.withdraw([x.id], on: &planner, now: now)

        // Then
        #expect(files.keptFiles[x.id] != nil && files.files[x.id] == nil)
        #expect(files.removed.isEmpty)
        #expect(effects.deletes.isEmpty)
        #expect(effects.rows.map(\.removedAt) == [now])
        #expect(effects.posted(AlbumRemoved.self).first?.keptUntil == now.addingTimeInterval(week))
        #expect(planner.summary.albums == 0)
    }

    @Test("Given a kept cover, when its album comes back with the same URL, then the cover is back with no download and the row no longer removed")
    mutating func returningAlbumGetsItsCoverBack() throws {
        let x = try album("x")
        cached(x)
        _ = steps.withdraw([x.id], on: &planner, now: now)

        // When
        let effects = steps.update([x], on: &planner, now: now.addingTimeInterval(60))

        // Then
        #expect(effects.fetches.isEmpty)
        #expect(files.files[x.id] != nil && files.keptFiles[x.id] == nil)
        #expect(effects.rows.map(\.state) == [.cached] && effects.rows.map(\.removedAt) == [nil])
        #expect(effects.posted(CoverRestored.self).map(\.album.id) == [x.id])
        #expect(planner.summary.cached == 1)
        #expect(planner.nextWakeUp() == nil, "nothing left to purge")
    }

    @Test("Given a kept cover, when its album comes back with another URL, then the kept cover is deleted and the new URL fetched")
    mutating func returningWithAnotherURLFetches() throws {
        let x = try album("x")
        cached(x)
        _ = steps.withdraw([x.id], on: &planner, now: now)

        // When
        let effects = steps.update([try album("x", "http://h/new.png")], on: &planner, now: now)

        // Then
        #expect(files.purged == [x.id])
        #expect(effects.fetches.map(\.1.string) == ["http://h/new.png"])
        #expect(planner.summary.pending == 1)
    }

    @Test("Given a kept cover, when keep_removed has passed, then the timer is set for then and deletes the cover and its row")
    mutating func keptCoverIsPurgedWhenDue() throws {
        let x = try album("x")
        cached(x)
        _ = steps.withdraw([x.id], on: &planner, now: now)
        #expect(planner.nextWakeUp() == now.addingTimeInterval(week))

        // When
        let early = steps.timerFired(on: &planner, now: now.addingTimeInterval(week - 1))
        let purgedEarly = files.purged
        let due = steps.timerFired(on: &planner, now: now.addingTimeInterval(week))

        // Then
        #expect(purgedEarly.isEmpty && early.deletes.isEmpty)
        #expect(files.purged == [x.id])
        #expect(due.deletes == [x.id])
        #expect(due.posted(KeptCoversPurged.self).first?.count == 1)
        #expect(planner.nextWakeUp() == nil)
    }

    @Test("Given an album still pending, when its record goes, then nothing is kept and its row deleted")
    mutating func pendingAlbumIsNotKept() throws {
        let x = try album("x")
        _ = steps.update([x], on: &planner, now: now)

        // When
        let effects = steps.withdraw([x.id], on: &planner, now: now)

        // Then
        #expect(files.keptFiles.isEmpty && files.removed == [x.id])
        #expect(effects.deletes == [x.id])
        #expect(effects.posted(AlbumRemoved.self).first?.keptUntil == nil)
    }

    @Test("Given kept rows in the index at start, when their albums come back in the first scan, then their covers return and nothing is fetched; those that do not stay kept")
    mutating func keptRowsSurviveARestart() throws {
        let x = try album("x"), y = try album("y", "http://h/y.png")
        for kept in [x, y] {
            var row = IndexRow(album: kept, state: .cached, updatedAt: now)
            row.bytes = 100
            row.fileMTime = 1
            row.removedAt = now
            planner.remember(row)
            files.keptFiles[kept.id] = FileStamp(bytes: 100, mtime: 1)
        }

        // When
        let effects = steps.update([x], on: &planner, now: now)
        let scan = RecordScanCompleted(reason: .startup, albumCount: 1, fileCount: 1, albumIDs: [x.id])
        let completed = steps.scanCompleted(scan, on: &planner, now: now)

        // Then
        #expect(effects.fetches.isEmpty && planner.summary.cached == 1)
        #expect(completed.deletes.isEmpty && files.purged.isEmpty, "y is still kept")
        #expect(files.keptFiles[y.id] != nil && files.files[x.id] != nil)
        #expect(planner.kept.row(y.id) != nil)
    }

    @Test("Given a cached album absent from the first scan, when it completes, then its cover is kept, not deleted")
    mutating func absentAtStartIsKept() throws {
        let gone = try album("gone")
        var row = IndexRow(album: gone, state: .cached, updatedAt: now)
        row.bytes = 100
        row.fileMTime = 1
        planner.load([row])
        files.files[gone.id] = FileStamp(bytes: 100, mtime: 1)

        // When
        let scan = RecordScanCompleted(reason: .startup, albumCount: 0, fileCount: 0, albumIDs: [])
        let effects = steps.scanCompleted(scan, on: &planner, now: now)

        // Then
        #expect(files.keptFiles[gone.id] != nil && files.files[gone.id] == nil)
        #expect(effects.rows.map(\.removedAt) == [now])
        #expect(effects.deletes.isEmpty)
    }

    @Test("Given a kept cover found corrupt as it comes back, when its album returns, then the file goes and the cover is fetched again")
    mutating func corruptKeptCoverIsFetched() throws {
        let x = try album("x")
        cached(x)
        _ = steps.withdraw([x.id], on: &planner, now: now)
        files.invalid.insert(x.id)

        // When
        let effects = steps.update([x], on: &planner, now: now)

        // Then
        #expect(files.removed == [x.id])
        #expect(effects.fetches.count == 1)
        #expect(effects.posted(CoverRestored.self).isEmpty)
    }

    @Test("Given an album whose cover a lookup found, when it leaves and comes back, then what the lookup found comes back with it")
    mutating func lookedUpCoverKeepsItsSource() throws {
        let release = try #require(MusicBrainzID("0b3f0a5c-1e2d-4c3b-8a9f-00000000000a"))
        let x = Album(id: try AlbumID(validating: "x"), title: "T", artist: "A", coverURL: nil, releaseID: release, record: "/r/a.json")
        var row = IndexRow(album: x, state: .cached, updatedAt: now)
        row.bytes = 100
        row.fileMTime = 1
        row.source = .release
        row.resolvedURL = "https://caa.example/release/\(release)/front"
        planner.load([row])
        files.files[x.id] = FileStamp(bytes: 100, mtime: 1)
        _ = steps.update([x], on: &planner, now: now)
        _ = steps.withdraw([x.id], on: &planner, now: now)

        // When
        let effects = steps.update([x], on: &planner, now: now)

        // Then
        #expect(effects.lookUps.isEmpty)
        #expect(effects.rows.first?.source == .release && effects.rows.first?.resolvedURL == row.resolvedURL)
    }

    @Test("Given a kept cover past keep_removed whose purge has not run yet, when its album comes back, then it is not restored but fetched again")
    mutating func expiredKeptCoverIsNotRestored() throws {
        let x = try album("x")
        cached(x)
        _ = steps.withdraw([x.id], on: &planner, now: now)

        // When
        let effects = steps.update([x], on: &planner, now: now.addingTimeInterval(week + 1))

        // Then
        #expect(files.purged == [x.id])
        #expect(effects.fetches.map(\.1.string) == ["http://h/a.png"])
        #expect(effects.posted(CoverRestored.self).isEmpty)
    }

    @Test("Given covers in removed/ that no kept row accounts for, when the sweep runs, then only those are deleted")
    mutating func orphanedKeptCoversAreSwept() throws {
        let x = try album("x")
        cached(x)
        _ = steps.withdraw([x.id], on: &planner, now: now)
        let orphan = try AlbumID(validating: "orphan")
        files.keptFiles[orphan] = FileStamp(bytes: 1, mtime: 1)

        // When
        _ = steps.sweepKept(on: &planner)

        // Then
        #expect(files.purged == [orphan])
        #expect(files.keptFiles[x.id] != nil)
    }

    @Test("Given albums that leave and come back thousands of times within keep_removed, when the purge order is kept, then its stale entries stay bounded and purges still come when due")
    mutating func flappingAlbumsDoNotGrowThePurgeOrder() throws {
        let x = try album("x"), y = try album("y", "http://h/y.png")
        cached(x)
        files.files[y.id] = FileStamp(bytes: 100, mtime: 1)
        var row = IndexRow(album: y, state: .cached, updatedAt: now)
        row.bytes = 100
        row.fileMTime = 1
        planner.load([row])
        _ = steps.update([y], on: &planner, now: now)
        _ = steps.withdraw([y.id], on: &planner, now: now)

        // When
        for second in 1...5_000 {
            let at = now.addingTimeInterval(TimeInterval(second))
            _ = steps.withdraw([x.id], on: &planner, now: at)
            _ = steps.update([x], on: &planner, now: at)
        }

        // Then
        #expect(planner.kept.staleEntries <= KeptCovers.staleAllowance)
        #expect(planner.nextWakeUp() == now.addingTimeInterval(week), "y, which left first, is due first")
        let due = steps.timerFired(on: &planner, now: now.addingTimeInterval(week))
        #expect(due.deletes == [y.id])
        #expect(planner.summary.cached == 1)
    }

    @Test("Given kept rows from an earlier run and keep_removed now 0, when the planner starts, then they are due at once and purged, and a returning album is fetched")
    mutating func keepRemovedZeroPurgesKeptRowsAtOnce() throws {
        planner.keepRemoved = .zero
        let x = try album("x"), y = try album("y", "http://h/y.png")
        for kept in [x, y] {
            var row = IndexRow(album: kept, state: .cached, updatedAt: now)
            row.bytes = 100
            row.fileMTime = 1
            row.removedAt = now.addingTimeInterval(-60)
            planner.remember(row)
            files.keptFiles[kept.id] = FileStamp(bytes: 100, mtime: 1)
        }

        // When
        let back = steps.update([x], on: &planner, now: now)
        let wakeUp = planner.nextWakeUp()
        let due = steps.timerFired(on: &planner, now: now)

        // Then
        #expect(back.fetches.count == 1 && back.posted(CoverRestored.self).isEmpty)
        #expect(wakeUp.map { $0 <= now } == true)
        #expect(Set(files.purged) == [x.id, y.id])
        #expect(due.deletes == [y.id])
        #expect(planner.nextWakeUp() == nil)
    }

    @Test("Given a cached album whose cover cannot be moved aside, when its record goes, then nothing is kept: its row is deleted and the log told no time to keep it until")
    mutating func unkeepableCoverIsNotKept() throws {
        let x = try album("x")
        cached(x)
        files.unkeepable = [x.id]

        // When
        let effects = steps.withdraw([x.id], on: &planner, now: now)

        // Then
        #expect(files.keptFiles.isEmpty)
        #expect(effects.deletes == [x.id])
        #expect(effects.rows.isEmpty)
        #expect(effects.posted(AlbumRemoved.self).first?.keptUntil == nil)
        #expect(planner.kept.row(x.id) == nil && planner.nextWakeUp() == nil)
    }

    @Test("Given a kept cover no row keeps whose album is cached without its file (a crash between the move and the row), when swept, then it goes back to covers/")
    mutating func orphanOfACachedAlbumGoesBack() throws {
        let x = try album("x")
        cached(x)
        let stamp = try #require(files.files[x.id])
        files.files[x.id] = nil
        files.keptFiles[x.id] = stamp

        // When
        _ = steps.sweepKept(on: &planner)

        // Then
        #expect(files.files[x.id] == stamp && files.keptFiles[x.id] == nil)
        #expect(files.purged.isEmpty)
    }
}
