import CoverdModel
import CoverdTestSupport
import Testing

/// What a cover URL must look like, and the origin (the unit of per-host
/// limits) each valid one belongs to.
@Suite("Cover URLs")
struct CoverURLTests {
    @Test(
        "Given a valid URL, when validated, then its origin is the lower-cased scheme, host and port, a scheme's default port left out",
        arguments: [
            ("HTTP://Example.COM/a.png", "http://example.com"),
            ("https://user:pw@Host.example:8443/x?y#z", "https://host.example:8443"),
            ("http://a@b@C/x", "http://c"),
            ("http://[::1]:8080/a", "http://[::1]:8080"),
            ("http://[::1]/a", "http://[::1]"),
            ("http://h?x=1", "http://h"),
            ("http://h#frag", "http://h"),
            ("http://127.0.0.1:59267/c000002.png?scale=2", "http://127.0.0.1:59267"),
            ("http://h:65535", "http://h:65535"),
            ("hTTpS://H", "https://h"),
            ("http://h:", "http://h"),
            ("http://h:80/a.png", "http://h"),
            ("https://h:443/a.png", "https://h"),
            ("HTTP://h:0080", "http://h"),
            ("https://h:80/", "https://h:80"),
            ("http://h:443/", "http://h:443"),
            ("http://h:08080/", "http://h:8080"),
            ("http://[::1]:", "http://[::1]"),
            ("http://[u@x]@h/", "http://h"),
        ])
    func validURLHasItsOrigin(text: String, origin: String) throws {
        // Given / When
        let url = try CoverURL(validating: text)
        // Then
        #expect(url.string == text)
        #expect(url.origin == origin)
    }

    @Test(
        "Given an invalid URL, when validated, then the reason names the problem",
        arguments: [
            ("", "is empty"),
            ("http://h/" + String(repeating: "a", count: 5000), "is 5009 bytes long (limit 4096)"),
            ("http://h/a b", "contains a space; percent-encode it"),
            ("http://h/ä", "contains non-ASCII characters; percent-encode it"),
            ("http://h/\u{7F}", "contains control characters; percent-encode it"),
            ("example.org/a.png", "is not an absolute URL"),
            ("FTP://h/a", "uses the scheme 'ftp'; only http and https are fetched"),
            ("http:/h/a", "has no host"),
            ("http:///a", "has no host"),
            ("http://:80/a", "has no host"),
            ("http://[]/a", "has no host"),
            ("http://[::1/a", "has a malformed IPv6 host"),
            ("http://[::1]x/a", "has a malformed host"),
            ("http://h:0/a", "has an invalid port"),
            ("http://h:65536/a", "has an invalid port"),
            ("http://h:123456/a", "has an invalid port"),
            ("http://h:8x/a", "has an invalid port"),
            ("http://h:-1/a", "has an invalid port"),
            ("http://h:+80/a", "has an invalid port"),
            ("http:", "has no host"),
            ("http:/", "has no host"),
            ("https" + String(repeating: "x", count: 40) + "://h", "uses the scheme 'https\(String(repeating: "x", count: 27))'; only http and https are fetched"),
            ("http://h/\t", "contains control characters; percent-encode it"),
            ("http://h/\u{1}", "contains control characters; percent-encode it"),
        ])
    func invalidURLIsRefusedWithItsReason(text: String, reason: String) {
        // Given / When / Then
        #expect(throws: AlbumFieldError.invalidURL(reason)) { try CoverURL(validating: text) }
    }

    @Test func givenTwentyThousandURLishStringsWhenValidatedThenTheVerdictsMatchTheStringBasedReference() {
        // Given: strings built from the characters a URL parser cares about, from a fixed seed
        var random = SplitMix64(seed: 0x5EED)
        let starts = ["http://", "HTTPS://", "hTtP:", "http:/", "ftp://", "http", "", "https://u@"]
        let pieces = ["h", "H", "x.org", ":", "/", "//", "[", "]", "[::1]", "@", "?", "#", "8", "0", "65535", "+", "-", ".", " ", "\t", "é", "%20"]
        var accepted = 0
        for _ in 0..<20_000 {
            var text = starts[Int(random.next() % UInt64(starts.count))]
            for _ in 0..<Int(random.next() % 8) { text += pieces[Int(random.next() % UInt64(pieces.count))] }
            // When
            let actual = Result { () throws(AlbumFieldError) -> String in try CoverURL(validating: text).origin }
            let expected = Result { () throws(AlbumFieldError) -> String in try ReferenceURLParser.origin(of: text) }
            // Then
            #expect(actual == expected, "\(text)")
            if case .success = expected { accepted += 1 }
        }
        #expect((1_000...19_000).contains(accepted), "both verdicts are exercised (\(accepted) accepted)")
    }
}

/// The String-based parser coverd used before it parsed bytes: the reference
/// the byte parser must agree with, message for message.
enum ReferenceURLParser {
    static func origin(of text: String, maxLength: Int = 4096) throws(AlbumFieldError) -> String {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty else { throw .invalidURL("is empty") }
        guard bytes.count <= maxLength else { throw .invalidURL("is \(bytes.count) bytes long (limit \(maxLength))") }
        if let bad = bytes.first(where: { $0 <= 0x20 || $0 >= 0x7F }) {
            let what = bad == 0x20 ? "a space" : (bad >= 0x80 ? "non-ASCII characters" : "control characters")
            throw .invalidURL("contains \(what); percent-encode it")
        }
        guard let schemeEnd = text.firstIndex(of: ":") else { throw .invalidURL("is not an absolute URL") }
        let scheme = text[..<schemeEnd].lowercased()
        guard scheme == "http" || scheme == "https" else {
            throw .invalidURL("uses the scheme '\(scheme.prefix(32))'; only http and https are fetched")
        }
        let rest = text[text.index(after: schemeEnd)...]
        guard rest.hasPrefix("//") else { throw .invalidURL("has no host") }
        let authority = rest.dropFirst(2).prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        let hostPort = authority.split(separator: "@", omittingEmptySubsequences: false).last ?? ""
        let host: Substring
        var port: Substring = ""
        if hostPort.hasPrefix("[") {
            guard let close = hostPort.firstIndex(of: "]") else { throw .invalidURL("has a malformed IPv6 host") }
            host = hostPort[hostPort.startIndex...close]
            let tail = hostPort[hostPort.index(after: close)...]
            if tail.hasPrefix(":") { port = tail.dropFirst() } else if !tail.isEmpty { throw .invalidURL("has a malformed host") }
        } else if let colon = hostPort.lastIndex(of: ":") {
            host = hostPort[..<colon]
            port = hostPort[hostPort.index(after: colon)...]
        } else {
            host = hostPort
        }
        guard host.count > (host.hasPrefix("[") ? 2 : 0) else { throw .invalidURL("has no host") }
        var number = scheme == "https" ? 443 : 80
        if !port.isEmpty {
            guard port.count <= 5, port.allSatisfy({ $0.isASCII && $0.isNumber }), let value = Int(port), (1...65535).contains(value) else {
                throw .invalidURL("has an invalid port")
            }
            number = value
        }
        return "\(scheme)://\(host.lowercased())" + (number == (scheme == "https" ? 443 : 80) ? "" : ":\(number)")
    }
}
