import CoverdBase
import CoverdModel
import CoverdTestSupport
import Foundation
import InMemoryLogging
import Logging
import Testing

@testable import CoverdDaemon
@testable import CoverdSync

@Suite("Event logger: the fields of covers looked up")
struct EventLoggerTests {
    let bus = EventBus()
    let handler = InMemoryLogHandler()
    let release = "0d1e0a53-4a8c-4c55-9e6d-5b6b54c4e6e4"
    let group = "1b022e01-4da6-387b-8658-8678046e4cef"

    func album() throws -> Album {
        try Album(id: AlbumID(validating: "a"), title: "T", artist: "A", coverURL: nil, releaseID: MusicBrainzID(release), record: "/r/a.json")
    }

    /// The first entry whose `event` field is `event`, once logged (the logger writes on its own queue).
    func entry(_ event: String) throws -> InMemoryLogHandler.Entry {
        try waitFor("a \(event) entry") { handler.entries.first { $0.metadata["event"] == "\(event)" } }
    }

    @Test("Given a cover from its record's URL, when logged, then its entry says source=url")
    func cachedFromTheRecordsURL() throws {
        let logger = EventLogger(bus: bus, logger: Logger(label: "test") { _ in handler })
        let url = try CoverURL(validating: "https://covers.example/a.png")
        let album = try Album(id: AlbumID(validating: "b"), title: "T", artist: "A", coverURL: url, record: "/r/b.json")

        // When
        bus.post(CoverCached(album: album, path: "/c/b.png", url: url, source: .url, releaseID: nil, releaseGroupID: nil, bytes: 10, httpStatus: 200, duration: .zero))

        // Then
        let metadata = try entry("cover_cached").metadata
        #expect(metadata["source"] == "url")
        #expect(metadata["mbid"] == nil && metadata["release_group_mbid"] == nil)
        withExtendedLifetime(logger) {}
    }

    @Test("Given a cover found through its release group, when logged, then the entry carries its source, the record's release id and the group found")
    func cachedCarriesWhereItWasFound() throws {
        let logger = EventLogger(bus: bus, logger: Logger(label: "test") { _ in handler })
        let url = try CoverURL(validating: "https://caa.example/release-group/1b022e01-4da6-387b-8658-8678046e4cef/front")

        // When
        bus.post(CoverCached(
            album: try album(), path: "/c/a.png", url: url, source: .releaseGroup, releaseID: nil, releaseGroupID: MusicBrainzID(group),
            bytes: 10, httpStatus: 200, duration: .milliseconds(3)))

        // Then
        let metadata = try entry("cover_cached").metadata
        #expect(metadata["source"] == "release-group")
        #expect(metadata["mbid"] == "\(release)")
        #expect(metadata["release_group_mbid"] == "\(group)")
        #expect(metadata["lookup"] == nil)
        withExtendedLifetime(logger) {}
    }

    @Test("Given a lookup that found nothing, when logged, then its cover_failed entry says lookup=not_found; a failure that is not that does not")
    func nothingFoundIsToldApart() throws {
        let logger = EventLogger(bus: bus, logger: Logger(label: "test") { _ in handler })

        // When
        bus.post(CoverFailed(
            album: try album(), url: nil, reason: "no cover found: nothing", nothingFound: true, httpStatus: nil, duration: nil,
            permanent: true, attempt: 1, retryAt: nil))

        // Then
        let metadata = try entry("cover_failed").metadata
        #expect(metadata["lookup"] == "not_found")
        #expect(metadata["error"] == "no cover found: nothing")
        handler.clear()
        bus.post(CoverFailed(
            album: try album(), url: nil, reason: "MusicBrainz: timed out", nothingFound: false, httpStatus: nil, duration: nil,
            permanent: false, attempt: 1, retryAt: nil))
        #expect(try entry("cover_failed").metadata["lookup"] == nil)
        withExtendedLifetime(logger) {}
    }
}
