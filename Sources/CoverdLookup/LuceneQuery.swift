/// MusicBrainz search queries in Lucene's syntax: each term a quoted phrase
/// with every special character escaped, so that a name such as `AC/DC`,
/// `"Weird Al" Yankovic` or `!!!` is searched for as written.
enum LuceneQuery {
    /// `+ - && || ! ( ) { } [ ] ^ " ~ * ? : \ /`, each escaped with a backslash (`&&` and `||` character by character).
    static let specialCharacters: Set<Character> = [
        "+", "-", "&", "|", "!", "(", ")", "{", "}", "[", "]", "^", "\"", "~", "*", "?", ":", "\\", "/",
    ]

    /// `text` as a quoted phrase.
    static func phrase(_ text: String) -> String {
        var out = "\""
        for character in text {
            if specialCharacters.contains(character) { out.append("\\") }
            out.append(character)
        }
        return out + "\""
    }

    /// A release-group search for an artist's release titled `title`.
    static func releaseGroup(artist: String, title: String) -> String {
        "artist:\(phrase(artist)) AND releasegroup:\(phrase(title))"
    }

    /// `text` percent-encoded for a URL's query: everything but RFC 3986's unreserved characters.
    static func percentEncoded(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            let unreserved = (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte)
                || byte == 0x2D || byte == 0x2E || byte == 0x5F || byte == 0x7E
            if unreserved {
                out.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                let hex = Array("0123456789ABCDEF".unicodeScalars)
                out.unicodeScalars.append("%")
                out.unicodeScalars.append(hex[Int(byte >> 4)])
                out.unicodeScalars.append(hex[Int(byte & 0x0F)])
            }
        }
        return out
    }
}
