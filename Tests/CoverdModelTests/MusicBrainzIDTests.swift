import CoverdModel
import Testing

@Suite("MusicBrainz ids")
struct MusicBrainzIDTests {
    @Test("Given a UUID in any case, when read, then it is kept lower-case")
    func anyCase() {
        #expect(MusicBrainzID("0B3F0A5C-1E2D-4C3B-8A9F-00000000000A")?.rawValue == "0b3f0a5c-1e2d-4c3b-8a9f-00000000000a")
    }

    @Test("Given text that is not a UUID, when read, then there is no id", arguments: [
        "", "0b3f0a5c1e2d4c3b8a9f00000000000a", "0b3f0a5c-1e2d-4c3b-8a9f-00000000000", "0b3f0a5c-1e2d-4c3b-8a9f-00000000000g",
        "{0b3f0a5c-1e2d-4c3b-8a9f-00000000000a}", " 0b3f0a5c-1e2d-4c3b-8a9f-00000000000a", "0b3f0a5c_1e2d-4c3b-8a9f-00000000000a",
    ])
    func notAUUID(text: String) {
        #expect(MusicBrainzID(text) == nil)
    }
}
