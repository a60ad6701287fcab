import CoverdCore
import Testing

/// What a cover URL must look like, and the origin (the unit of per-host
/// limits) each valid one belongs to.
@Suite("Cover URLs")
struct CoverURLTests {
    @Test(
        "Given a valid URL, when validated, then its origin is the lower-cased scheme, host and port",
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
        ])
    func invalidURLIsRefusedWithItsReason(text: String, reason: String) {
        // Given / When / Then
        #expect(throws: AlbumFieldError.invalidURL(reason)) { try CoverURL(validating: text) }
    }
}
