import CoverdTestSupport
@testable import CoverdModel
@testable import CoverdRecords
import Testing

@Suite("Record text checked on ASCII bytes")
struct ASCIITextTests {
    @Test("Given 20,000 generated texts, when the ASCII shortcut decides one, then it decides as the general check does")
    func agreesWithTheGeneralCheck() {
        let alphabet: [String] = ["a", "Z", "0", " ", "\t", "\n", "\u{7F}", "\u{1F}", "é", "\u{85}", "\u{A0}", "–", "🎵", "\"", "\\"]
        var generator = SplitMix64(seed: 20_261_122)  // the same texts every run, so a failure replays
        var decided = 0
        for _ in 0..<20_000 {
            let length = Int.random(in: 0...12, using: &generator)
            // Mostly plain ASCII, so that the shortcut is exercised as often as in real records.
            let plain = Bool.random(using: &generator)
            let text = (0..<length).map { _ in plain ? ["a", "Z", "0", " "].randomElement(using: &generator)! : alphabet.randomElement(using: &generator)! }.joined()
            let trim = Bool.random(using: &generator)
            let limit = Int.random(in: 0...10, using: &generator)
            // allowEmpty: an empty text is then a result, not an error, on both sides.
            let general = Result { () throws(AlbumFieldError) in
                try AlbumValidator.checkedScalars(text, name: "f", trim: trim, limit: limit, allowEmpty: true)
            }
            let context: Comment = "\(text.debugDescription) trim \(trim) limit \(limit)"
            switch ASCIIText.check(text, trim: trim, limit: limit) {
            case .general: continue
            case .accepted: #expect(general == .success(text), context)
            case .tooLong(let count): #expect(general == .failure(.tooLong(field: "f", length: count, limit: limit)), context)
            case .controlCharacters: #expect(general == .failure(.controlCharacters(field: "f")), context)
            case .empty: #expect(general == .success(""), context)
            }
            decided += 1
        }
        #expect(decided > 5_000)
    }

    @Test("Given ASCII with a space to trim or a non-ASCII letter, when checked, then it goes the general way")
    func leavesTheRestToTheGeneralCheck() {
        #expect(ASCIIText.check(" Abbey Road", trim: true, limit: 100) == .general)
        #expect(ASCIIText.check("Abbey Road ", trim: true, limit: 100) == .general)
        #expect(ASCIIText.check("Sigur Rós", trim: true, limit: 100) == .general)
        #expect(ASCIIText.check(" http://h/a.png", trim: false, limit: 100) == .accepted)
        #expect(ASCIIText.check("Abbey Road", trim: true, limit: 100) == .accepted)
        #expect(ASCIIText.check("", trim: true, limit: 100) == .empty)
    }
}
