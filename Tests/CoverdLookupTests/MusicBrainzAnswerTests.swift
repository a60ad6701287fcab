@testable import CoverdLookup
import CoverdModel
import Testing

@Suite("MusicBrainz answers")
struct MusicBrainzAnswerTests {
    let group = "0b3f0a5c-1e2d-4c3b-8a9f-000000000001"

    func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test("Given a release looked up with its release group, when read, then the group's id comes out lower-case")
    func releaseGroupOfRelease() throws {
        let answer = #"{"id": "x", "title": "T", "release-group": {"id": "\#(group.uppercased())", "title": "T"}}"#
        #expect(try MusicBrainzAnswer.releaseGroup(ofRelease: bytes(answer)).rawValue == group)
    }

    @Test("Given a search answer, when read, then each group keeps its score, title and whole artist credit, join phrases included")
    func searchResults() throws {
        let answer = #"""
            {"created": "2026-01-01T00:00:00Z", "count": 1, "offset": 0, "release-groups": [
              {"id": "\#(group)", "score": 97, "title": "Bridge over Troubled Water",
               "artist-credit": [{"name": "Simon", "joinphrase": " & ", "artist": {"id": "a", "name": "Paul Simon"}},
                                 {"name": "Garfunkel", "artist": {"id": "b", "name": "Art Garfunkel"}}]}]}
            """#
        let search = try MusicBrainzAnswer.releaseGroupSearch(bytes(answer))
        #expect(search.candidates == [.init(id: try #require(MusicBrainzID(group)), score: 97, title: "Bridge over Troubled Water", artist: "Simon & Garfunkel")])
        #expect(search.skipped.isEmpty)
    }

    @Test("Given results with an invalid id or a score that is not a number, when read, then those are passed over with a reason and the rest kept")
    func badResultsPassedOver() throws {
        let answer = #"""
            {"release-groups": [
              {"id": "not-a-uuid", "score": 100, "title": "T", "artist-credit": [{"name": "A"}]},
              {"id": "\#(group)", "score": "high", "title": "T", "artist-credit": [{"name": "A"}]},
              {"id": "\#(group)", "score": 90, "title": "T", "artist-credit": [{"name": "A"}]}]}
            """#
        let search = try MusicBrainzAnswer.releaseGroupSearch(bytes(answer))
        #expect(search.candidates.map(\.score) == [90])
        #expect(search.skipped.count == 2)
        #expect(search.skipped[0].contains("not a MusicBrainz id") && search.skipped[1].contains("'score'"), "\(search.skipped)")
    }

    @Test("Given answers that are not what the API documents, when read, then each is refused with what was wrong", arguments: [
        ("<html><body>Service Unavailable</body></html>", "not JSON"),
        (#"{"release-groups": {}}"#, "not an array"),
        (#"{"count": 0}"#, "no 'release-groups'"),
        (String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000), "not JSON"),
        ("[]", "not an object"),
    ])
    func malformedSearch(answer: String, reason: String) {
        #expect {
            try MusicBrainzAnswer.releaseGroupSearch(Array(answer.utf8))
        } throws: { error in
            (error as? MusicBrainzAnswer.Malformed)?.reason.contains(reason) == true
        }
    }

    @Test("Given search results, when matched for an album, then only its artist and title at the minimum score count, best score first")
    func matchesPassOverDecoys() throws {
        let ids = (1...4).compactMap { MusicBrainzID("0b3f0a5c-1e2d-4c3b-8a9f-00000000000\($0)") }
        try #require(ids.count == 4)
        let search = MusicBrainzAnswer.Search(candidates: [
            .init(id: ids[0], score: 100, title: "Greatest Hits", artist: "Queen Latifah"),
            .init(id: ids[1], score: 95, title: "Greatest Hits", artist: "Queen"),
            .init(id: ids[2], score: 99, title: "Greatest Hits", artist: "QUEEN"),
            .init(id: ids[3], score: 80, title: "Greatest Hits", artist: "Queen"),
        ], skipped: [])
        let request = LookupRequest(releaseID: nil, releaseGroupID: nil, artist: "Queen", title: "Greatest Hits")
        #expect(CoverLookup.matches(in: search, for: request, minScore: 90).map(\.id) == [ids[2], ids[1]])
    }
}
