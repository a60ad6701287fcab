/// Artist credits and titles compared as people mean them: case, accents
/// (NFKD, marks dropped), punctuation, symbols and spacing do not count, so
/// "Mötley Crüe" is "MOTLEY CRUE" and "AC/DC" is "ACDC", while "Queen" is not
/// "Queen Latifah".
enum NameMatching {
    /// Whether two names are the same once normalised. Names that are all
    /// punctuation ("!!!") are compared with their punctuation kept.
    static func same(_ left: String, _ right: String) -> Bool {
        let (a, b) = (normalised(left), normalised(right))
        if a.isEmpty && b.isEmpty { return normalised(left, keepingPunctuation: true) == normalised(right, keepingPunctuation: true) }
        return a == b
    }

    /// Lower case, compatibility-decomposed, marks dropped, and only letters
    /// and digits kept (or, `keepingPunctuation`, everything but white space).
    static func normalised(_ text: String, keepingPunctuation: Bool = false) -> String {
        var out = String.UnicodeScalarView()
        for scalar in text.decomposedStringWithCompatibilityMapping.lowercased().unicodeScalars {
            let properties = scalar.properties
            switch properties.generalCategory {
            case .nonspacingMark, .spacingMark, .enclosingMark:
                continue
            default:
                break
            }
            if properties.isAlphabetic || properties.numericType != nil || (keepingPunctuation && !properties.isWhitespace) {
                out.append(scalar)
            }
        }
        return String(out)
    }

    /// A MusicBrainz artist credit as one name: each name followed by its join phrase.
    static func credit(_ parts: [(name: String, joinPhrase: String)]) -> String {
        parts.map { $0.name + $0.joinPhrase }.joined()
    }
}
