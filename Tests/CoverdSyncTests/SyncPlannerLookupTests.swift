@testable import CoverdCache
@testable import CoverdFetch
@testable import CoverdLookup
@testable import CoverdModel
@testable import CoverdSync
import Foundation
import Testing

extension [SyncEffect] {
    var lookUps: [(FetchID, LookupRequest)] { compactMap { if case .lookUp(let id, let request) = $0 { return (id, request) }; return nil } }
}

@Suite("Sync planner: lookups")
struct SyncPlannerLookupTests {
    let now = Date(timeIntervalSince1970: 1_000_000)
    let files = FakeCoverFiles()
    /// The planner's steps run against `files`, as the coordinator runs them against the disk.
    var steps: CoverFileSteps<FakeCoverFiles> { CoverFileSteps(files: files) }
    var planner = SyncPlanner(policy: RetryPolicy(), paths: CoverPaths(directory: "/cache/covers"), random: { 0.5 })
    let release: MusicBrainzID
    let group: MusicBrainzID
    let found: CoverURL

    init() throws {
        release = try #require(MusicBrainzID("0b3f0a5c-1e2d-4c3b-8a9f-00000000000a"))
        group = try #require(MusicBrainzID("0b3f0a5c-1e2d-4c3b-8a9f-00000000000b"))
        found = try CoverURL(validating: "https://caa.example/release/0b3f0a5c-1e2d-4c3b-8a9f-00000000000a/front-500")
    }

    func album(_ id: String, title: String = "T", artist: String = "A", mbid: MusicBrainzID? = nil) throws -> Album {
        Album(id: try AlbumID(validating: id), title: title, artist: artist, coverURL: nil, releaseID: mbid, record: "/r/a.json")
    }

    func body() -> FetchedBody {
        FetchedBody(bytes: [UInt8](repeating: 1, count: 100), httpStatus: 200, effectiveURL: "", duration: .milliseconds(5))
    }

    func staged(_ request: StageRequest) -> StagedCovers {
        var temporaries: [AlbumID: TemporaryCover] = [:]
        for id in request.albums { temporaries[id] = TemporaryCover(path: "/cache/incoming/.\(id).tmp", bytes: 100, stamp: FileStamp(bytes: 100, mtime: 1)) }
        return StagedCovers(temporaries: temporaries, bytes: 100, httpStatus: 200, duration: .milliseconds(5))
    }

    @Test("Given two albums without a URL and the same release id, when updated, then one lookup starts for both and both count as waiting for it")
    mutating func oneLookupPerRequest() throws {
        // When
        let effects = steps.update([try album("x", mbid: release), try album("y", mbid: release)], on: &planner, now: now)

        // Then
        #expect(effects.lookUps.map(\.1) == [LookupRequest(releaseID: release, releaseGroupID: nil, artist: "A", title: "T")])
        #expect(effects.fetches.isEmpty)
        #expect(planner.summary == SyncSummary(albums: 2, cached: 0, pending: 2, failed: 0, awaitingLookup: 2))
    }

    @Test("Given a lookup that found a cover, when it is staged and committed, then both albums are cached with the source, the ids and the URL found")
    mutating func foundCoverIsCachedWithWhereItCameFrom() throws {
        let start = try #require(steps.update([try album("x", mbid: release), try album("y", mbid: release)], on: &planner, now: now).lookUps.first)
        let resolution = Resolution(url: found, source: .release, releaseID: release, releaseGroupID: group)

        // When
        let stage = try #require(planner.lookupFinished(start.0, request: start.1, outcome: .found(resolution, body()), now: now).stages.first)
        let effects = steps.staged(stage.fetchID, job: stage.job, result: .success(staged(stage)), on: &planner, now: now)

        // Then
        #expect(stage.url == found)
        #expect(effects.rows.map(\.state) == [.cached, .cached])
        #expect(effects.rows.allSatisfy { $0.source == .release && $0.resolvedURL == found.string && $0.foundReleaseGroupID == group.rawValue })
        let cached = effects.posted(CoverCached.self)
        #expect(cached.map(\.url) == [found, found] && cached.allSatisfy { $0.source == .release })
        #expect(planner.summary == SyncSummary(albums: 2, cached: 2, pending: 0, failed: 0, awaitingLookup: 0))
    }

    @Test("Given a lookup that found nothing, when it ends, then the album fails with that error and is looked up again after the recheck interval, never before")
    mutating func nothingFoundWaitsTheRecheck() throws {
        let start = try #require(steps.update([try album("x")], on: &planner, now: now).lookUps.first)

        // When
        let effects = planner.lookupFinished(start.0, request: start.1, outcome: .notFound("no cover found: a search found nothing"), now: now)

        // Then
        let row = try #require(effects.rows.first)
        #expect(row.state == .failed && row.error == "no cover found: a search found nothing")
        let week = RetryPolicy().lookupRecheck.seconds
        let due = try #require(row.nextRetry).timeIntervalSince(now)
        #expect(due >= week && due <= week * 1.2, "\(due)")
        #expect(effects.posted(CoverFailed.self).first?.url == nil)
        #expect(effects.posted(CoverFailed.self).first?.nothingFound == true)
        #expect(steps.timerFired(on: &planner, now: now.addingTimeInterval(week * 0.999)).lookUps.isEmpty)
        #expect(steps.timerFired(on: &planner, now: now.addingTimeInterval(week * 1.2)).lookUps.count == 1)
    }

    @Test("Given a MusicBrainz 503, when the lookup fails, then the album stays pending and is tried again after the server's Retry-After")
    mutating func transientFailureBacksOff() throws {
        let start = try #require(steps.update([try album("x")], on: &planner, now: now).lookUps.first)
        let failure = FetchFailure(kind: .http(503), message: "MusicBrainz: HTTP 503", httpStatus: 503, retryAfter: .seconds(7))

        let effects = planner.lookupFinished(start.0, request: start.1, outcome: .failed(failure), now: now)

        #expect(effects.rows.first?.state == .pending)
        #expect(effects.rows.first?.nextRetry == now.addingTimeInterval(7))
        #expect(planner.summary.awaitingLookup == 1)
    }

    @Test("Given an album cached by a lookup in an earlier run, when the first scan sees it unchanged, then nothing is looked up and what was found is kept")
    mutating func warmRestartLooksNothingUp() throws {
        let x = try album("x", mbid: release)
        var row = IndexRow(album: x, state: .cached, updatedAt: now)
        row.bytes = 100
        row.fileMTime = 1
        row.source = .releaseGroup
        row.foundReleaseGroupID = group.rawValue
        row.resolvedURL = found.string
        row.checkedAt = now  // As every cached row of index version 4 has it.
        planner.load([row])

        // When
        let effects = steps.update([x], on: &planner, now: now)

        // Then
        #expect(effects.lookUps.isEmpty && effects.fetches.isEmpty && effects.rows.isEmpty)
        #expect(planner.summary.cached == 1)
        #expect(planner.row(for: x.id, now: now).resolvedURL == found.string)
    }

    @Test("Given an album whose record gains a cover_url while its lookup runs, when updated, then the lookup is cancelled, the URL fetched, and it no longer counts as waiting for a lookup")
    mutating func recordGainsAURL() throws {
        let start = try #require(steps.update([try album("x")], on: &planner, now: now).lookUps.first)
        let url = try CoverURL(validating: "http://h/x.png")
        let withURL = Album(id: try AlbumID(validating: "x"), title: "T", artist: "A", coverURL: url, record: "/r/a.json")

        let effects = steps.update([withURL], on: &planner, now: now)

        #expect(effects.cancels == [start.0])
        #expect(effects.fetches.map(\.1) == [url])
        #expect(planner.summary == SyncSummary(albums: 1, cached: 0, pending: 1, failed: 0, awaitingLookup: 0))
    }

    /// An album cached in an earlier run by a lookup through `group`.
    mutating func cachedByLookup(_ x: Album) {
        var row = IndexRow(album: x, state: .cached, updatedAt: now)
        row.bytes = 100
        row.fileMTime = 1
        row.source = .releaseGroup
        row.foundReleaseGroupID = group.rawValue
        row.resolvedURL = found.string
        planner.load([row])
        _ = steps.update([x], on: &planner, now: now)
    }

    @Test("Given an album cached by a lookup, when its cover is lost and the new lookup finds nothing, then its row shows no source, no found ids and no URL")
    mutating func lostCoverForgetsWhatFoundIt() throws {
        let x = try album("x", mbid: release)
        cachedByLookup(x)

        // When
        let lost = steps.settleChecked([x.id], verdicts: [CoverVerdict(.missing, stamp: nil)], on: &planner, now: now).effects
        let start = try #require(lost.lookUps.first)
        #expect(planner.row(for: x.id, now: now).source == nil, "what found the lost cover is not what the album shows")
        let effects = planner.lookupFinished(start.0, request: start.1, outcome: .notFound("no cover found: nothing"), now: now)

        // Then
        let row = try #require(effects.rows.first)
        #expect(row.state == .failed)
        #expect(row.source == nil && row.foundReleaseGroupID == nil && row.resolvedURL == nil, "\(row)")
        #expect(effects.posted(CoverFailed.self).first?.url == nil)
    }

    @Test("Given a lookup whose found image is not an image, when it fails, then the failure names the URL found; and when the next lookup fails, it names none")
    mutating func failureNamesOnlyThisAttemptsURL() throws {
        let start = try #require(steps.update([try album("x", mbid: release)], on: &planner, now: now).lookUps.first)
        let resolution = Resolution(url: found, source: .release, releaseID: release, releaseGroupID: nil)
        let stage = try #require(planner.lookupFinished(start.0, request: start.1, outcome: .found(resolution, body()), now: now).stages.first)

        // When
        let rejected = steps.staged(stage.fetchID, job: stage.job, result: .failure(.image(.notAnImage(.html))), on: &planner, now: now)

        // Then
        #expect(rejected.posted(CoverFailed.self).first?.url == found)
        #expect(rejected.rows.first?.source == nil, "the album is not cached: nothing found it a cover")
        let retry = try #require(steps.timerFired(on: &planner, now: now.addingTimeInterval(30 * 86_400)).lookUps.first)
        let failure = FetchFailure(kind: .timeout, message: "MusicBrainz: timed out")
        let timedOut = planner.lookupFinished(retry.0, request: retry.1, outcome: .failed(failure), now: now.addingTimeInterval(30 * 86_400))
        #expect(timedOut.posted(CoverFailed.self).first?.url == nil)
    }
}
