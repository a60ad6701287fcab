@testable import CoverdBase
@testable import CoverdCache
@testable import CoverdFetch
import CoverdImages
@testable import CoverdModel
@testable import CoverdRecords
@testable import CoverdSync
import Foundation
import Testing

extension [SyncEffect] {
    var revalidations: [(FetchID, JobKey, CoverURL, Validators)] {
        compactMap { if case .revalidate(let id, let key, let url, let validators) = $0 { return (id, key, url, validators) }; return nil }
    }
}

@Suite("Sync planner: freshness, revalidation and refresh")
struct FreshnessTests {
    let now = Date(timeIntervalSince1970: 1_000_000)
    let day: TimeInterval = 86_400
    let files = FakeCoverFiles()
    var steps: CoverFileSteps<FakeCoverFiles> { CoverFileSteps(files: files) }
    /// max_age a day; `random` 0.5 puts each due time half a tenth of a day past it.
    var planner = SyncPlanner(policy: RetryPolicy(), paths: CoverPaths(directory: "/cache/covers"), maxAge: .seconds(86_400), random: { 0.5 })

    func album(_ id: String, _ url: String = "http://h/a.png") throws -> Album {
        Album(id: try AlbumID(validating: id), title: "T", artist: "A", coverURL: try CoverURL(validating: url), record: "/r/a.json")
    }

    /// Fetches and stores `album`'s cover at `at`, the server giving `validators`.
    mutating func cache(_ album: Album, at: Date, validators: Validators = Validators(etag: "\"v1\"", lastModified: "Mon, 01 Jan 2024 00:00:00 GMT")) throws {
        let fetch = try #require(steps.update([album], on: &planner, now: at).fetches.first)
        var body = FetchedBody(bytes: [1, 2, 3], httpStatus: 200, effectiveURL: fetch.1.string, duration: .milliseconds(5))
        body.validators = validators
        let request = try #require(planner.fetchFinished(fetch.0, url: fetch.1, outcome: .success(body), now: at).stages.first)
        _ = steps.staged(request.fetchID, job: request.job, result: .success(staged(request, validators: validators)), on: &planner, now: at)
    }

    func staged(_ request: StageRequest, validators: Validators, mtime: Int64 = 1) -> StagedCovers {
        var temporaries: [AlbumID: TemporaryCover] = [:]
        for id in request.albums { temporaries[id] = TemporaryCover(path: "/cache/incoming/.\(id).tmp", bytes: 100, stamp: FileStamp(bytes: 100, mtime: mtime)) }
        return StagedCovers(temporaries: temporaries, bytes: 100, httpStatus: 200, duration: .milliseconds(5), validators: validators)
    }

    @Test("Given a cover cached with validators, when max_age and its jitter pass, then it is revalidated with them, and not a moment before")
    mutating func outdatedCoverIsRevalidatedWithItsValidators() throws {
        let x = try album("x")
        try cache(x, at: now)
        let due = now.addingTimeInterval(day * 1.05)
        #expect(planner.nextWakeUp() == due)

        // When
        let early = steps.timerFired(on: &planner, now: due.addingTimeInterval(-1))
        let onTime = steps.timerFired(on: &planner, now: due)

        // Then
        #expect(early.revalidations.isEmpty)
        let revalidation = try #require(onTime.revalidations.first)
        #expect(revalidation.2.string == "http://h/a.png")
        #expect(revalidation.3 == Validators(etag: "\"v1\"", lastModified: "Mon, 01 Jan 2024 00:00:00 GMT"))
        #expect(onTime.rows.first?.refresh == .revalidate, "the index says it is outdated meanwhile")
        #expect(planner.summary.outdated == 1 && planner.summary.cached == 1)
    }

    @Test("Given a revalidation answered 304, when it ends, then the file is left alone, checked_at moves, the new validators are kept and the next one is a max_age later")
    mutating func notModifiedConfirms() throws {
        let x = try album("x")
        try cache(x, at: now)
        let due = now.addingTimeInterval(day * 1.05)
        let revalidation = try #require(steps.timerFired(on: &planner, now: due).revalidations.first)

        // When
        let answer = NotModified(effectiveURL: "http://h/a.png", duration: .milliseconds(3), validators: Validators(etag: "\"v2\"", lastModified: nil))
        let effects = planner.revalidationFinished(revalidation.0, job: revalidation.1, outcome: .notModified(answer), now: due)

        // Then
        #expect(effects.stages.isEmpty && files.removed.isEmpty)
        let row = try #require(effects.rows.first)
        #expect(row.checkedAt == due && row.etag == "\"v2\"" && row.lastModified == "Mon, 01 Jan 2024 00:00:00 GMT" && row.refresh == nil)
        #expect(effects.posted(CoverRevalidated.self).map(\.album.id) == [x.id])
        #expect(planner.summary.outdated == 0)
        #expect(planner.nextWakeUp() == due.addingTimeInterval(day * 1.05))
    }

    @Test("Given a revalidation answered with a new body, when it is staged and renamed, then the new file replaces the old and is announced as updated")
    mutating func newBodyReplacesTheCover() throws {
        let x = try album("x")
        try cache(x, at: now)
        let due = now.addingTimeInterval(day * 1.05)
        let revalidation = try #require(steps.timerFired(on: &planner, now: due).revalidations.first)
        var body = FetchedBody(bytes: [9, 9], httpStatus: 200, effectiveURL: "http://h/a.png", duration: .milliseconds(5))
        body.validators = Validators(etag: "\"v2\"", lastModified: nil)

        // When
        let request = try #require(planner.revalidationFinished(revalidation.0, job: revalidation.1, outcome: .success(body), now: due).stages.first)
        let effects = steps.staged(
            request.fetchID, job: request.job, result: .success(staged(request, validators: body.validators, mtime: 7)), on: &planner, now: due)

        // Then
        #expect(files.files[x.id] == FileStamp(bytes: 100, mtime: 7), "renamed over the old file")
        let cached = try #require(effects.posted(CoverCached.self).first)
        #expect(cached.revalidated)
        #expect(effects.rows.first?.etag == "\"v2\"" && effects.rows.first?.checkedAt == due)
        #expect(planner.summary.cached == 1 && planner.summary.outdated == 0)
    }

    @Test("Given a revalidation that fails (a 500, or a body that is no image), when it ends, then the album stays cached and outdated, and is tried again with backoff")
    mutating func failureKeepsTheOldCover() throws {
        let x = try album("x")
        try cache(x, at: now)
        let due = now.addingTimeInterval(day * 1.05)
        let first = try #require(steps.timerFired(on: &planner, now: due).revalidations.first)

        // When
        let failed = planner.revalidationFinished(
            first.0, job: first.1, outcome: .failure(FetchFailure(kind: .http(500), message: "HTTP 500", httpStatus: 500)), now: due)

        // Then
        #expect(planner.summary.cached == 1 && planner.summary.outdated == 1)
        #expect(files.removed.isEmpty)
        let retry = try #require(failed.posted(RevalidationFailed.self).first?.retryAt)
        #expect(retry > due && retry <= due.addingTimeInterval(2))
        #expect(failed.rows.first?.refresh == .revalidate && failed.rows.first?.checkedAt == now)
        let second = try #require(steps.timerFired(on: &planner, now: retry).revalidations.first)
        var body = FetchedBody(bytes: [0], httpStatus: 200, effectiveURL: "", duration: .zero)
        body.validators = Validators(etag: nil, lastModified: nil)
        let request = try #require(planner.revalidationFinished(second.0, job: second.1, outcome: .success(body), now: retry).stages.first)
        let refused = steps.staged(request.fetchID, job: request.job, result: .failure(.image(.notAnImage(.html))), on: &planner, now: retry)
        #expect(planner.summary.cached == 1 && files.files[x.id] != nil)
        #expect(refused.posted(RevalidationFailed.self).count == 1)
        #expect(refused.posted(CoverFailed.self).isEmpty)
    }

    @Test("Given thousands of covers due at once, when the timer fires, then only a few revalidations run at a time, the next starting as one ends")
    mutating func revalidationsAreSpreadOut() throws {
        var index = 0
        for id in (0..<50).map({ "a\($0)" }) {
            index += 1
            try cache(try album(id, "http://h/\(id).png"), at: now)
        }
        let due = now.addingTimeInterval(day * 1.05)

        // When
        let started = steps.timerFired(on: &planner, now: due).revalidations
        let more = steps.timerFired(on: &planner, now: due).revalidations
        let answer = NotModified(effectiveURL: "", duration: .zero, validators: Validators(etag: nil, lastModified: nil))
        _ = planner.revalidationFinished(started[0].0, job: started[0].1, outcome: .notModified(answer), now: due)

        // Then
        #expect(started.count == SyncPlanner.revalidationSlots)
        #expect(more.isEmpty, "no slot is free")
        #expect(planner.nextWakeUp() == due, "a slot freed: the next is due now")
        #expect(steps.timerFired(on: &planner, now: due).revalidations.count == 1)
    }

    @Test("Given a new album while revalidations run, when it is added, then its download starts at once")
    mutating func revalidationNeverHoldsUpNewAlbums() throws {
        for id in (0..<10).map({ "a\($0)" }) { try cache(try album(id, "http://h/\(id).png"), at: now) }
        _ = steps.timerFired(on: &planner, now: now.addingTimeInterval(day * 2))

        // When
        let effects = steps.update([try album("new", "http://h/new.png")], on: &planner, now: now.addingTimeInterval(day * 2))

        // Then
        #expect(effects.fetches.map(\.1.string) == ["http://h/new.png"])
    }

    @Test("Given refresh of an unknown id among known ones, when asked, then it names the unknown and changes nothing")
    mutating func refreshOfUnknownChangesNothing() throws {
        try cache(try album("x"), at: now)

        // When
        let (result, effects) = steps.refresh(
            RefreshRequest(ids: [try AlbumID(validating: "x"), try AlbumID(validating: "nope")], all: false, mark: .erase), on: &planner, now: now)

        // Then
        #expect(result == .unknown([try AlbumID(validating: "nope")]))
        #expect(effects.isEmpty && files.removed.isEmpty && planner.summary.cached == 1)
    }

    @Test("Given refresh of a fresh cover, when asked, then it is outdated and revalidated at once")
    mutating func refreshRevalidatesNow() throws {
        let x = try album("x")
        try cache(x, at: now)

        // When
        let (result, effects) = steps.refresh(RefreshRequest(ids: [x.id], all: false, mark: .revalidate), on: &planner, now: now.addingTimeInterval(60))

        // Then
        #expect(result == .refreshed(count: 1))
        #expect(effects.revalidations.map(\.3.etag) == ["\"v1\""])
        #expect(planner.summary.outdated == 1)
    }

    @Test("Given refresh --erase of a cached cover, when asked, then its file goes and it is fetched anew, without validators, even beside a cached copy")
    mutating func eraseFetchesAnew() throws {
        let x = try album("x"), y = try album("y")
        try cache(x, at: now)
        // y shares the URL: cached from x's copy.
        let copy = try #require(steps.update([y], on: &planner, now: now).stages.first)
        _ = steps.staged(copy.fetchID, job: copy.job, result: .success(staged(copy, validators: Validators(etag: nil, lastModified: nil))), on: &planner, now: now)
        #expect(planner.summary.cached == 2)

        // When
        let (result, effects) = steps.refresh(RefreshRequest(ids: [x.id], all: false, mark: .erase), on: &planner, now: now)

        // Then
        #expect(result == .refreshed(count: 1))
        #expect(files.removed.contains(x.id))
        #expect(effects.fetches.map(\.1.string) == ["http://h/a.png"], "a download, not a copy")
        #expect(effects.revalidations.isEmpty)
        #expect(planner.summary.pending >= 1)
    }

    @Test("Given an index row marked for refresh while no daemon ran, when the daemon starts, then the cover is revalidated at once and the mark cleared once confirmed")
    mutating func markFromTheIndexIsTaken() throws {
        let x = try album("x")
        var row = IndexRow(album: x, state: .cached, updatedAt: now)
        row.bytes = 100
        row.fileMTime = 1
        row.checkedAt = now
        row.etag = "\"v1\""
        row.refresh = .revalidate
        planner.load([row])
        files.files[x.id] = FileStamp(bytes: 100, mtime: 1)

        // When
        _ = steps.update([x], on: &planner, now: now)
        let wakeUp = planner.nextWakeUp()
        let effects = steps.timerFired(on: &planner, now: now)

        // Then
        #expect(wakeUp == now, "due at once")
        let revalidation = try #require(effects.revalidations.first)
        #expect(revalidation.3.etag == "\"v1\"")
        let answer = NotModified(effectiveURL: "", duration: .zero, validators: Validators(etag: nil, lastModified: nil))
        let confirmed = planner.revalidationFinished(revalidation.0, job: revalidation.1, outcome: .notModified(answer), now: now)
        #expect(confirmed.rows.first?.refresh == nil)
    }

    @Test("Given max_age 0, when covers are cached, then none is ever due")
    mutating func maxAgeZeroNeverRevalidates() throws {
        planner.freshness.setMaxAge(.zero, unit: { 0.5 })
        try cache(try album("x"), at: now)
        #expect(planner.nextWakeUp() == nil)
        #expect(steps.timerFired(on: &planner, now: now.addingTimeInterval(day * 365)).revalidations.isEmpty)
    }

    @Test("Given a cover whose album goes during its revalidation, when the 304 comes, then nothing is written for it")
    mutating func withdrawnDuringRevalidation() throws {
        let x = try album("x")
        try cache(x, at: now)
        let revalidation = try #require(steps.timerFired(on: &planner, now: now.addingTimeInterval(day * 2)).revalidations.first)
        _ = steps.withdraw([x.id], on: &planner, now: now.addingTimeInterval(day * 2))

        // When
        let answer = NotModified(effectiveURL: "", duration: .zero, validators: Validators(etag: nil, lastModified: nil))
        let effects = planner.revalidationFinished(revalidation.0, job: revalidation.1, outcome: .notModified(answer), now: now.addingTimeInterval(day * 2))

        // Then
        #expect(effects.isEmpty)
    }

    @Test("Given a revalidation answered 404, or 503 with Retry-After, when it fails, then it is asked again after the failed interval, or when the server said")
    mutating func failuresFollowTheRetryRules() throws {
        try cache(try album("x", "http://h/x.png"), at: now)
        try cache(try album("y", "http://h/y.png"), at: now)
        let due = now.addingTimeInterval(day * 1.05)
        let started = steps.timerFired(on: &planner, now: due).revalidations
        let byURL = Dictionary(uniqueKeysWithValues: started.map { ($0.2.string, $0) })
        let x = try #require(byURL["http://h/x.png"]), y = try #require(byURL["http://h/y.png"])

        // When
        let gone = planner.revalidationFinished(
            x.0, job: x.1, outcome: .failure(FetchFailure(kind: .http(404), message: "HTTP 404", httpStatus: 404)), now: due)
        var busy = FetchFailure(kind: .http(503), message: "HTTP 503", httpStatus: 503)
        busy.retryAfter = .seconds(600)
        let later = planner.revalidationFinished(y.0, job: y.1, outcome: .failure(busy), now: due)

        // Then
        #expect(gone.posted(RevalidationFailed.self).first?.retryAt == due.addingTimeInterval(86_400))
        #expect(later.posted(RevalidationFailed.self).first?.retryAt == due.addingTimeInterval(600))
        #expect(planner.summary.cached == 2 && planner.summary.outdated == 2)
    }

    @Test("Given a copy of a cover asked for before that cover's revalidation brings a new body, when both land, then the copy keeps the validators of the bytes it copied")
    mutating func copyKeepsTheValidatorsOfItsBytes() throws {
        let x = try album("x"), y = try album("y")
        try cache(x, at: now)
        let due = now.addingTimeInterval(day * 1.05)
        let revalidation = try #require(steps.timerFired(on: &planner, now: due).revalidations.first)
        let copy = try #require(steps.update([y], on: &planner, now: due).stages.first)  // The old bytes' copy, asked for now.
        var body = FetchedBody(bytes: [7], httpStatus: 200, effectiveURL: "", duration: .zero)
        body.validators = Validators(etag: "\"v2\"", lastModified: nil)
        let request = try #require(planner.revalidationFinished(revalidation.0, job: revalidation.1, outcome: .success(body), now: due).stages.first)
        _ = steps.staged(request.fetchID, job: request.job, result: .success(staged(request, validators: body.validators)), on: &planner, now: due)

        // When: the copy of the old bytes lands after x's new validators did
        var copied = staged(copy, validators: Validators(etag: nil, lastModified: nil))
        copied.copiedFrom = x.id
        let effects = steps.staged(copy.fetchID, job: copy.job, result: .success(copied), on: &planner, now: due)

        // Then
        let row = try #require(effects.rows.first { $0.id == y.id })
        #expect(row.etag == "\"v1\"", "the copy's bytes are the old cover's")
        #expect(row.checkedAt == now)
    }

    @Test("Given a cover due while its job's revalidation is already staging a new body, when the timer fires, then it is asked again right after, not dropped")
    mutating func dueDuringStagingIsNotDropped() throws {
        let x = try album("x"), y = try album("y")
        try cache(x, at: now)
        let copy = try #require(steps.update([y], on: &planner, now: now.addingTimeInterval(3600)).stages.first)
        _ = steps.staged(copy.fetchID, job: copy.job, result: .success(staged(copy, validators: Validators(etag: nil, lastModified: nil))),
                         on: &planner, now: now.addingTimeInterval(3600))
        let due = now.addingTimeInterval(day * 1.05)
        let revalidation = try #require(steps.timerFired(on: &planner, now: due).revalidations.first)
        var body = FetchedBody(bytes: [7], httpStatus: 200, effectiveURL: "", duration: .zero)
        body.validators = Validators(etag: "\"v2\"", lastModified: nil)
        _ = planner.revalidationFinished(revalidation.0, job: revalidation.1, outcome: .success(body), now: due)

        // When: y (copied an hour later) comes due while x's new body is staging
        let later = due.addingTimeInterval(3600)
        let effects = steps.timerFired(on: &planner, now: later)

        // Then
        #expect(effects.revalidations.isEmpty)
        #expect(planner.nextWakeUp() == later.addingTimeInterval(1))
    }

    @Test("Given two albums on one URL whose covers differ (one kept the old bytes when its rename failed), when a 304 answers the other's validators, then only that one is confirmed, and the other is asked on its own")
    mutating func notModifiedConfirmsOnlyMatchingValidators() throws {
        let x = try album("x"), y = try album("y")
        try cache(x, at: now)
        let copy = try #require(steps.update([y], on: &planner, now: now).stages.first)
        var copied = staged(copy, validators: Validators(etag: nil, lastModified: nil))
        copied.copiedFrom = x.id
        _ = steps.staged(copy.fetchID, job: copy.job, result: .success(copied), on: &planner, now: now)
        let due = now.addingTimeInterval(day * 2)
        let first = try #require(steps.timerFired(on: &planner, now: due).revalidations.first)
        var body = FetchedBody(bytes: [7], httpStatus: 200, effectiveURL: "", duration: .zero)
        body.validators = Validators(etag: "\"v2\"", lastModified: nil)
        let request = try #require(planner.revalidationFinished(first.0, job: first.1, outcome: .success(body), now: due).stages.first)
        let newBody = staged(request, validators: body.validators)
        _ = planner.committed(request.fetchID, job: request.job, staged: newBody, renamed: [
            x.id: .success(FileStamp(bytes: 100, mtime: 9)), y.id: .failure(SystemError("rename", path: "/y", code: ENOSPC)),
        ], now: due)
        #expect(planner.freshness.validators(y.id).etag == "\"v1\"" && planner.freshness.validators(x.id).etag == "\"v2\"")

        // When: x is refreshed, asked with v2, and the server answers 304
        let (_, refreshed) = steps.refresh(RefreshRequest(ids: [x.id], all: false, mark: .revalidate), on: &planner, now: due)
        let second = try #require(refreshed.revalidations.first)
        #expect(second.3.etag == "\"v2\"")
        let answer = NotModified(effectiveURL: "", duration: .zero, validators: Validators(etag: "\"v2\"", lastModified: nil))
        let effects = planner.revalidationFinished(second.0, job: second.1, outcome: .notModified(answer), now: due)

        // Then
        #expect(effects.posted(CoverRevalidated.self).map(\.album.id) == [x.id])
        #expect(planner.freshness.validators(y.id).etag == "\"v1\"", "y's old bytes keep their own validators")
        #expect(planner.freshness.outdated.contains(y.id))
    }

    @Test("Given a cover being revalidated, when a new album on its URL is copied from it, then the copy is asked again once it lands")
    mutating func copyOfAnOutdatedCoverIsAskedAgain() throws {
        let x = try album("x"), y = try album("y")
        try cache(x, at: now)
        let due = now.addingTimeInterval(day * 2)
        _ = try #require(steps.timerFired(on: &planner, now: due).revalidations.first)

        // When
        let copy = try #require(steps.update([y], on: &planner, now: due).stages.first)
        var copied = staged(copy, validators: Validators(etag: nil, lastModified: nil))
        copied.copiedFrom = x.id
        let effects = steps.staged(copy.fetchID, job: copy.job, result: .success(copied), on: &planner, now: due)

        // Then
        #expect(planner.freshness.outdated.contains(y.id))
        #expect(effects.rows.first { $0.id == y.id }?.refresh == .revalidate)
    }

    @Test("Given a revalidation whose server sends the same cover again (no validators to answer 304 with), when it is staged, then the file is left alone and the cover confirmed")
    mutating func sameBytesAreNotRewritten() throws {
        let x = try album("x")
        try cache(x, at: now, validators: Validators(etag: nil, lastModified: nil))
        let before = files.files[x.id]
        let due = now.addingTimeInterval(day * 2)
        let revalidation = try #require(steps.timerFired(on: &planner, now: due).revalidations.first)
        let body = FetchedBody(bytes: [1, 2, 3], httpStatus: 200, effectiveURL: "", duration: .zero)
        let request = try #require(planner.revalidationFinished(revalidation.0, job: revalidation.1, outcome: .success(body), now: due).stages.first)
        let same = staged(request, validators: Validators(etag: nil, lastModified: nil), mtime: 42)
        files.sameBytes = Set(same.temporaries.values.map(\.path))

        // When
        let effects = steps.staged(request.fetchID, job: request.job, result: .success(same), on: &planner, now: due)

        // Then
        #expect(files.files[x.id] == before, "not renamed over")
        #expect(files.discarded == same.temporaries.values.map(\.path))
        #expect(effects.posted(CoverRevalidated.self).map(\.album.id) == [x.id])
        #expect(effects.posted(CoverCached.self).isEmpty)
        #expect(effects.rows.first?.checkedAt == due && planner.summary.outdated == 0)
    }
}

@Suite("Freshness schedule")
struct FreshnessScheduleTests {
    let now = Date(timeIntervalSince1970: 1_000_000)

    @Test("Given covers confirmed and confirmed again many times, when their validators are read, then each has its latest, and the unused bytes are reclaimed")
    func validatorsSurviveCompaction() throws {
        var schedule = FreshnessSchedule(maxAge: .seconds(60))
        let ids = try (0..<100).map { try AlbumID(validating: "a\($0)") }
        for round in 0..<200 {
            for (index, id) in ids.enumerated() {
                let etag = index % 3 == 0 ? nil : "\"\(round)-\(index)-" + String(repeating: "x", count: index % 40) + "\""
                let modified = index % 5 == 0 ? nil : "Mon, 0\(round % 9 + 1) Jan 2024 00:00:00 GMT"
                schedule.confirm(id, at: now, validators: Validators(etag: etag, lastModified: modified), unit: 0.5)
            }
        }
        for (index, id) in ids.enumerated() {
            let etag = index % 3 == 0 ? nil : "\"199-\(index)-" + String(repeating: "x", count: index % 40) + "\""
            #expect(schedule.validators(id) == Validators(etag: etag, lastModified: index % 5 == 0 ? nil : "Mon, 02 Jan 2024 00:00:00 GMT"))
        }
        schedule.forget(ids[1])
        #expect(schedule.validators(ids[1]) == Validators(etag: nil, lastModified: nil))
    }

    @Test("Given covers confirmed at once, when their due times are drawn, then they spread over a tenth of max_age past it, in order")
    func dueTimesAreSpread() throws {
        var schedule = FreshnessSchedule(maxAge: .seconds(1000))
        var unit = 0.0
        let ids = try (0..<10).map { try AlbumID(validating: "a\($0)") }
        for id in ids.reversed() {
            schedule.confirm(id, at: now, validators: Validators(etag: nil, lastModified: nil), unit: unit)
            unit += 0.1
        }
        #expect(schedule.nextDue() == now.addingTimeInterval(1000))
        #expect(schedule.takeDue(now: now.addingTimeInterval(999.9)) == nil)
        var taken: [AlbumID] = []
        while let id = schedule.takeDue(now: now.addingTimeInterval(1100)) { taken.append(id) }
        #expect(taken == ids.reversed())
        #expect(schedule.outdated.count == 10)
    }
}
