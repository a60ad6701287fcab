@testable import CoverdLookup
import Testing

@Suite("Name matching")
struct NameMatchingTests {
    @Test("Given names that differ in case, accents, punctuation or spacing only, when compared, then they are the same", arguments: [
        ("Mötley Crüe", "MOTLEY CRUE"),
        ("Sigur Rós", "sigur ros"),
        ("AC/DC", "ACDC"),
        ("Guns N’ Roses", "Guns N' Roses"),
        ("  The   Beatles ", "the beatles"),
        ("!!!", "!!!"),
    ])
    func sameNames(left: String, right: String) {
        #expect(NameMatching.same(left, right))
    }

    @Test("Given different names, when compared, then they are not the same", arguments: [
        ("Queen", "Queen Latifah"),
        ("!!!", "!!"),
        ("Sigur Rós", "Sigur Rós Live"),
    ])
    func differentNames(left: String, right: String) {
        #expect(!NameMatching.same(left, right))
    }
}
