@testable import CoverdModel
import CoverdTestSupport
import Testing

@Suite("Derived album ids")
struct DerivedIDTests {
    /// Covers on disk are named by these ids: a change here would fetch every cover of a library again.
    /// The expected ids are the ones `coverd add` printed at 7df576b, before the ASCII shortcut.
    @Test("Given artists and titles, when ids are derived either way, then they are the ones earlier versions derived",
          arguments: [
              ("Bench", "Album 0", "bench-album-0-f1fc9bd03925"),
              ("  BENCH\t", "album   0\n", "bench-album-0-f1fc9bd03925"),
              ("David Bowie", "Best of Bowie", "david-bowie-best-of-bowie-be7fc615949c"),
              ("AC/DC", "Back in Black", "ac-dc-back-in-black-9b13ed11a587"),
              ("!!!", "???", "32e24e377dc1"),
              (String(repeating: "a", count: 79), "b c", String(repeating: "a", count: 79) + "-34bd488e70ff"),
              ("!!!", String(repeating: "x", count: 100), String(repeating: "x", count: 80) + "-b70922cb9528"),
              ("Björk", "Homogenic", "bjork-homogenic-2bb80a987a19"),
              ("Sigur Rós", "( )", "sigur-ros-c22c6c404ff6"),
              ("坂本龍一", "音楽図鑑", "e3cc147be092"),
          ])
    func stableAcrossVersions(artist: String, title: String, expected: String) {
        #expect(AlbumID.derived(artist: artist, title: title).rawValue == expected)
        #expect(AlbumID.derivedScalarByScalar(artist: artist, title: title).rawValue == expected)
    }

    @Test("Given 20,000 generated ASCII artists and titles, when the shortcut derives an id, then it is the general way's id")
    func asciiShortcutAgreesWithTheGeneralWay() {
        // Every ASCII scalar, and the one ASCII grapheme of two scalars.
        let alphabet = (0..<128).map { String(UnicodeScalar(UInt8($0))) } + ["\r\n"]
        var generator = SplitMix64(seed: 20_261_123)  // the same texts every run, so a failure replays
        for _ in 0..<20_000 {
            func text() -> String {
                // Short fields, and long ones whose readable part passes the 80-character cut.
                let length = Int.random(in: 0...(Bool.random(using: &generator) ? 6 : 140), using: &generator)
                return (0..<length).map { _ in alphabet.randomElement(using: &generator)! }.joined()
            }
            expectAgreement(text(), text())
        }
    }

    @Test("Given each ASCII byte around letters, alone and repeated, when the shortcut derives an id, then it is the general way's id")
    func everyASCIIByte() {
        for byte in 0..<128 {
            let b = String(UnicodeScalar(UInt8(byte)))
            for (artist, title) in [("x\(b)Y", b), (b, ""), ("", b), ("\(b)\(b)a", "a\(b)"), ("9\(b)z", "\(b)0\(b)")] {
                expectAgreement(artist, title)
            }
        }
    }

    @Test("Given readable parts around the 80-character cut, with dashes on and beside it, when derived, then the shortcut agrees")
    func aroundTheCut() {
        let titles = ["b", "b c", String(repeating: "t", count: 90), "-" + String(repeating: "9", count: 85)]
        for length in [0, 1] + Array(70...90) + [150] {
            for dash in [nil, 78, 79, 80, 81] {
                var artist = Array(repeating: Character("a"), count: length)
                if let dash, dash < length { artist[dash] = " " }
                for title in titles { expectAgreement(String(artist), title) }
            }
        }
        for separators in ["!!!", " ", "-", "--x--"] {
            for title in titles { expectAgreement(separators, title) }
        }
    }

    @Test("Given a non-ASCII artist, when an id is derived, then the ASCII shortcut declines")
    func shortcutDeclinesOtherText() {
        #expect(AlbumID.derivedFromASCII(artist: "Sigur Rós", title: "Takk") == nil)
        #expect(AlbumID.derivedFromASCII(artist: "Sigur Ros", title: "Takk\u{A0}") == nil)
        #expect(AlbumID.derivedFromASCII(artist: "Sigur Ros", title: "Takk") != nil)
    }

    private func expectAgreement(_ artist: String, _ title: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let fast = AlbumID.derivedFromASCII(artist: artist, title: title)
        #expect(fast != nil, "\(artist.debugDescription) \(title.debugDescription) are ASCII", sourceLocation: sourceLocation)
        #expect(fast == AlbumID.derivedScalarByScalar(artist: artist, title: title),
                "\(artist.debugDescription) \(title.debugDescription)", sourceLocation: sourceLocation)
    }
}
