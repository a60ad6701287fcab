@testable import CoverdBase
@testable import CoverdCache
@testable import CoverdFetch
@testable import CoverdModel
@testable import CoverdRecords
@testable import CoverdSync
import Foundation
import Testing

/// In-memory `CoverFiles`: which covers exist and are valid.
final class FakeCoverFiles: CoverFiles {
    var files: [AlbumID: FileStamp] = [:]
    var invalid: Set<AlbumID> = []
    var removed: [AlbumID] = []
    var discarded: [String] = []
    var failCommits = false
    var room = true
    /// The albums whose files were checked, in order.
    var checked: [AlbumID] = []

    func check(_ id: AlbumID, expected row: IndexRow?) -> CachedFileCheck {
        checked.append(id)
        guard let stamp = files[id] else { return .missing }
        return invalid.contains(id) ? .invalid("bad CRC") : .valid(stamp)
    }

    func stamp(_ id: AlbumID) -> FileStamp? { files[id] }

    func commit(_ temporary: TemporaryCover, as id: AlbumID) throws(SystemError) -> FileStamp {
        if failCommits { throw SystemError("rename", path: temporary.path, code: ENOSPC) }
        // A rename keeps the temporary's stamp.
        let stamp = FileStamp(bytes: temporary.bytes, mtime: temporary.stamp.mtime)
        files[id] = stamp
        return stamp
    }

    func discard(_ temporary: TemporaryCover) { discarded.append(temporary.path) }
    /// Temporaries whose bytes are those of the album's file already.
    var sameBytes: Set<String> = []
    func holdsSameBytes(_ temporary: TemporaryCover, as id: AlbumID) -> Bool { sameBytes.contains(temporary.path) }
    func remove(_ id: AlbumID) { removed.append(id); files[id] = nil }
    /// Covers moved aside for albums that left the records.
    var keptFiles: [AlbumID: FileStamp] = [:]
    var purged: [AlbumID] = []
    /// Ids whose keep fails (another filesystem), as `CoverStore.keep` reports it: the file is deleted.
    var unkeepable: Set<AlbumID> = []
    func keep(_ id: AlbumID) -> Bool {
        guard let stamp = files.removeValue(forKey: id), !unkeepable.contains(id) else { return false }
        keptFiles[id] = stamp
        return true
    }
    func restoreKept(_ id: AlbumID) -> Bool {
        guard let stamp = keptFiles.removeValue(forKey: id) else { return false }
        files[id] = stamp
        return true
    }
    func purgeKept(_ id: AlbumID) { purged.append(id); keptFiles[id] = nil }
    func keptIDs() -> [AlbumID] { Array(keptFiles.keys) }
    func freeSpace() -> FreeSpace { room ? FreeSpace(available: nil, reserve: 0) : FreeSpace(available: 0, reserve: 1) }
}

extension [SyncEffect] {
    var fetches: [(FetchID, CoverURL)] { compactMap { if case .fetch(let id, let url) = $0 { return (id, url) }; return nil } }
    var cancels: [FetchID] { compactMap { if case .cancelAttempt(let id) = $0 { return id }; return nil } }
    var stages: [StageRequest] { compactMap { if case .stage(let request) = $0 { return request }; return nil } }
    var rows: [IndexRow] { compactMap { if case .index(.upsert(let row)) = $0 { return row }; return nil } }
    var deletes: [AlbumID] { compactMap { if case .index(.delete(let id)) = $0 { return id }; return nil } }
    func posted<M: BusMessage>(_ type: M.Type) -> [M] { compactMap { if case .post(let message) = $0 { return message as? M }; return nil } }
}

@Suite("Sync planner")
struct SyncPlannerTests {
    let now = Date(timeIntervalSince1970: 1_000_000)
    let files = FakeCoverFiles()
    /// The planner's steps run against `files`, as the coordinator runs them against the disk.
    var steps: CoverFileSteps<FakeCoverFiles> { CoverFileSteps(files: files) }
    var planner = SyncPlanner(policy: RetryPolicy(), paths: CoverPaths(directory: "/cache/covers"), random: { 0.5 })

    func album(_ id: String, _ url: String = "http://h/a.png", title: String = "T") throws -> Album {
        Album(id: try AlbumID(validating: id), title: title, artist: "A", coverURL: try CoverURL(validating: url), record: "/r/a.json")
    }

    func body(_ bytes: Int = 100) -> FetchedBody {
        FetchedBody(bytes: [UInt8](repeating: 1, count: bytes), httpStatus: 200, effectiveURL: "", duration: .milliseconds(5))
    }

    func stagedCovers(_ request: StageRequest, bytes: Int = 100) -> StagedCovers {
        var temporaries: [AlbumID: TemporaryCover] = [:]
        for id in request.albums { temporaries[id] = TemporaryCover(path: "/cache/covers/.\(id).tmp", bytes: bytes, stamp: FileStamp(bytes: bytes, mtime: 1)) }
        return StagedCovers(temporaries: temporaries, bytes: bytes, httpStatus: 200, duration: .milliseconds(5))
    }

    /// Fetches and stores `album`'s cover, returning the effects of the store.
    mutating func cache(_ album: Album) throws -> [SyncEffect] {
        let fetch = try #require(steps.update([album], on: &planner, now: now).fetches.first)
        let request = try #require(planner.fetchFinished(fetch.0, url: fetch.1, outcome: .success(body()), now: now).stages.first)
        return steps.staged(request.fetchID, url: request.url, result: .success(stagedCovers(request)), on: &planner, now: now)
    }

    @Test("Given a new album, when updated, then it is pending, announced, indexed and fetched")
    mutating func newAlbumIsFetched() throws {
        let effects = steps.update([try album("x")], on: &planner, now: now)
        #expect(effects.fetches.map(\.1.string) == ["http://h/a.png"])
        #expect(effects.rows.map(\.state) == [.pending])
        #expect(effects.posted(AlbumsAdded.self).flatMap(\.albums).map(\.id.rawValue) == ["x"])
        #expect(planner.summary == SyncSummary(albums: 1, cached: 0, pending: 1, failed: 0))
    }

    @Test("Given two albums sharing a URL, when updated, then the URL is fetched once and both are cached from it")
    mutating func sharedURLFetchedOnce() throws {
        let effects = steps.update([try album("x"), try album("y")], on: &planner, now: now)
        let fetches = effects.fetches
        #expect(fetches.count == 1)
        let done = planner.fetchFinished(fetches[0].0, url: fetches[0].1, outcome: .success(body()), now: now)
        let request = try #require(done.stages.first)
        #expect(request.albums.map(\.rawValue) == ["x", "y"])
        let stored = steps.staged(request.fetchID, url: request.url, result: .success(stagedCovers(request)), on: &planner, now: now)
        #expect(stored.posted(CoverCached.self).map(\.album.id.rawValue) == ["x", "y"])
        #expect(stored.rows.allSatisfy { $0.state == .cached && $0.bytes == 100 })
        #expect(planner.summary == SyncSummary(albums: 2, cached: 2, pending: 0, failed: 0))
    }

    @Test("Given a cached row and a valid file from an earlier run, when the album is seen again, then nothing is fetched")
    mutating func cachedStaysCached() throws {
        let album = try album("x")
        var row = IndexRow(album: album, state: .cached, updatedAt: now)
        row.bytes = 100
        row.fileMTime = 1
        planner.load([row])
        files.files[album.id] = FileStamp(bytes: 100, mtime: 1)
        let effects = steps.update([album], on: &planner, now: now)
        #expect(effects.fetches.isEmpty)
        #expect(effects.posted(AlbumsAdded.self).isEmpty)
        #expect(planner.summary.cached == 1)
    }

    @Test("Given a cached row whose file vanished, when the album is seen, then it is fetched again")
    mutating func missingFileRefetched() throws {
        let album = try album("x")
        planner.load([IndexRow(album: album, state: .cached, updatedAt: now)])
        let effects = steps.update([album], on: &planner, now: now)
        #expect(effects.fetches.count == 1)
    }

    @Test("Given a pending row whose file was renamed into place before a crash, when seen, then the file is adopted")
    mutating func crashAdoption() throws {
        let album = try album("x")
        planner.load([IndexRow(album: album, state: .pending, updatedAt: now)])
        files.files[album.id] = FileStamp(bytes: 50, mtime: 2)
        let effects = steps.update([album], on: &planner, now: now)
        #expect(effects.fetches.isEmpty)
        #expect(effects.rows.last?.state == .cached)
        #expect(effects.rows.last?.bytes == 50)
    }

    @Test("Given the only album of a fetch withdrawn, when withdrawn, then the fetch is cancelled and the album forgotten")
    mutating func withdrawCancels() throws {
        let album = try album("x")
        let fetch = try #require(steps.update([album], on: &planner, now: now).fetches.first)
        let effects = steps.withdraw([album.id], on: &planner, now: now)
        #expect(effects.cancels == [fetch.0])
        #expect(effects.deletes == [album.id])
        #expect(files.removed == [album.id])
        #expect(effects.posted(AlbumRemoved.self).count == 1)
        #expect(planner.summary == SyncSummary())
        // The outcome arriving later is ignored.
        #expect(planner.fetchFinished(fetch.0, url: fetch.1, outcome: .success(body()), now: now).isEmpty)
    }

    @Test("Given one of two albums on a URL withdrawn, when withdrawn, then the fetch goes on for the other")
    mutating func withdrawOneOfTwo() throws {
        _ = steps.update([try album("x"), try album("y")], on: &planner, now: now)
        let effects = steps.withdraw([try AlbumID(validating: "x")], on: &planner, now: now)
        #expect(effects.cancels.isEmpty)
    }

    @Test("Given a cached album whose URL changes, when updated, then the old cover goes and the new URL is fetched")
    mutating func urlChange() throws {
        let first = try #require(steps.update([try album("x")], on: &planner, now: now).fetches.first)
        let request = try #require(planner.fetchFinished(first.0, url: first.1, outcome: .success(body()), now: now).stages.first)
        _ = steps.staged(request.fetchID, url: request.url, result: .success(stagedCovers(request)), on: &planner, now: now)
        let effects = steps.update([try album("x", "http://h/new.png")], on: &planner, now: now)
        #expect(effects.fetches.map(\.1.string) == ["http://h/new.png"])
        #expect(files.removed.map(\.rawValue) == ["x"])
        #expect(planner.summary.pending == 1)
    }

    @Test("Given albums known to the index but absent from the first scan, and covers not kept (keep_removed 0), when it completes, then they are removed")
    mutating func startupPurge() throws {
        planner.keepRemoved = .zero
        let gone = try album("gone")
        planner.load([IndexRow(album: gone, state: .cached, updatedAt: now)])
        _ = steps.update([try album("kept")], on: &planner, now: now)
        let scan = RecordScanCompleted(reason: .startup, albumCount: 1, fileCount: 1, albumIDs: [try AlbumID(validating: "kept")])
        let effects = steps.scanCompleted(scan, on: &planner, now: now)
        #expect(effects.deletes == [gone.id])
        #expect(files.removed == [gone.id])
        #expect(effects.posted(AlbumRemoved.self).map(\.id) == [gone.id])
    }

    @Test("Given failed albums and a corrupt cached file, when reloaded, then all are fetched again")
    mutating func reloadRetries() throws {
        let failing = try #require(steps.update([try album("x", "http://h/x.png")], on: &planner, now: now).fetches.first)
        _ = planner.fetchFinished(failing.0, url: failing.1, outcome: .failure(FetchFailure(kind: .http(404), message: "404")), now: now)
        let good = try #require(steps.update([try album("y", "http://h/y.png")], on: &planner, now: now).fetches.first)
        let request = try #require(planner.fetchFinished(good.0, url: good.1, outcome: .success(body()), now: now).stages.first)
        _ = steps.staged(request.fetchID, url: request.url, result: .success(stagedCovers(request)), on: &planner, now: now)
        files.invalid.insert(try AlbumID(validating: "y"))
        let y: Set = [try AlbumID(validating: "y")]
        let reload = planner.retryAll(now: now)
        #expect(reload.effects.fetches.map(\.1.string) == ["http://h/x.png"])
        #expect(reload.cached == Array(y))
        // The coordinator's check then reads the flagged cover off its queue and settles what it found.
        let read = planner.differing(reload.cached, found: reload.cached.map { files.stamp($0) }, flagged: y)
        let verdicts = read.ids.map { CoverVerdict(files.check($0, expected: nil), stamp: files.stamp($0)) }
        let effects = steps.settleChecked(read.ids, verdicts: verdicts, flagged: y, on: &planner, now: now).effects
        #expect(effects.fetches.map(\.1.string) == ["http://h/y.png"])
        #expect(effects.rows.first { $0.id.rawValue == "y" }?.error?.contains("corrupt") == true)
        #expect(files.removed == Array(y))
    }

    @Test("Given an album joining while its URL's body is being stored, when stored, then it gets a copy of the stored cover")
    mutating func lateJoiner() throws {
        let fetch = try #require(steps.update([try album("x")], on: &planner, now: now).fetches.first)
        let request = try #require(planner.fetchFinished(fetch.0, url: fetch.1, outcome: .success(body()), now: now).stages.first)
        #expect(steps.update([try album("y")], on: &planner, now: now).fetches.isEmpty)
        let effects = steps.staged(request.fetchID, url: request.url, result: .success(stagedCovers(request)), on: &planner, now: now)
        #expect(effects.posted(CoverCached.self).map(\.album.id.rawValue) == ["x"])
        #expect(effects.fetches.isEmpty)
        guard case .cachedCover(let source)? = effects.stages.first?.source else { Issue.record("no copy"); return }
        #expect(source.rawValue == "x")
    }

    @Test("Given a URL already cached for one album, when another album with it appears later, then it is copied, not fetched")
    mutating func laterAlbumCopiesCachedURL() throws {
        _ = try cache(try album("x"))
        let effects = steps.update([try album("y")], on: &planner, now: now)
        #expect(effects.fetches.isEmpty)
        let request = try #require(effects.stages.first)
        guard case .cachedCover(let source) = request.source else { Issue.record("not a copy"); return }
        #expect(source.rawValue == "x")
        let stored = steps.staged(request.fetchID, url: request.url, result: .success(stagedCovers(request)), on: &planner, now: now)
        #expect(stored.posted(CoverCached.self).map(\.album.id.rawValue) == ["y"])
        #expect(planner.summary.cached == 2)
    }

    @Test("Given a cached copy that turns out unusable, when staging fails, then the URL is fetched instead")
    mutating func copyFallsBackToFetch() throws {
        _ = try cache(try album("x"))
        let request = try #require(steps.update([try album("y")], on: &planner, now: now).stages.first)
        let effects = steps.staged(request.fetchID, url: request.url, result: .failure(.sourceUnavailable("gone")), on: &planner, now: now)
        #expect(effects.fetches.count == 1)
    }

    @Test("Given a record file that cannot be read at start, when the scan completes, then its albums stay until the file goes")
    mutating func unreadableRecordKeepsAlbums() throws {
        planner.keepRemoved = .zero
        let kept = try album("x")
        var row = IndexRow(album: kept, state: .cached, updatedAt: now)
        row.bytes = 100
        row.fileMTime = 1
        planner.load([row])
        files.files[kept.id] = FileStamp(bytes: 100, mtime: 1)
        let scan = RecordScanCompleted(reason: .startup, albumCount: 0, fileCount: 0, albumIDs: [], unreadable: ["/r/a.json"])
        let effects = steps.scanCompleted(scan, on: &planner, now: now)
        #expect(effects.deletes.isEmpty)
        #expect(files.removed.isEmpty)
        #expect(planner.summary.cached == 1)
        let gone = steps.recordsRemoved(["/r/a.json"], on: &planner, now: now)
        #expect(gone.deletes == [kept.id])
        #expect(planner.summary.albums == 0)
    }

    @Test("Given a URL change while the old URL downloads, when the old download finishes, then it is ignored")
    mutating func staleOutcomeAfterURLChange() throws {
        let old = try #require(steps.update([try album("x")], on: &planner, now: now).fetches.first)
        let changed = steps.update([try album("x", "http://h/new.png")], on: &planner, now: now)
        #expect(changed.cancels == [old.0])
        #expect(planner.fetchFinished(old.0, url: old.1, outcome: .success(body()), now: now).isEmpty)
        #expect(planner.summary.pending == 1)
    }
}
