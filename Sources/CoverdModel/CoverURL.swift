/// An absolute http or https URL that passed record validation.
public struct CoverURL: Sendable, Hashable, CustomStringConvertible, Comparable {
    public let string: String

    /// `scheme://host:port`, lower-cased, the port as a number and left out
    /// when it is the scheme's default: the unit of per-host limits, so that
    /// `http://h/` and `http://h:80/` count against one host. Derived when
    /// asked (once per fetch) rather than stored with every album.
    public var origin: String {
        var text = string
        return text.withUTF8 { bytes in
            // The string was validated, so it parses.
            guard case .success(let parts) = CoverURL.parse(bytes, maxLength: Int.max) else { return string }
            let scheme = String(decoding: bytes[..<parts.schemeEnd], as: UTF8.self).lowercased()
            var origin = scheme + "://" + String(decoding: bytes[parts.host], as: UTF8.self).lowercased()
            // Validation allowed 1–65535 in at most five digits.
            let port = bytes[parts.port].reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
            if !parts.port.isEmpty && port != (scheme == "https" ? 443 : 80) { origin += ":\(port)" }
            return origin
        }
    }

    /// Accepts only absolute `http`/`https` URLs with a host, made of printable
    /// ASCII (spaces and non-ASCII must be percent-encoded), at most `maxLength` bytes.
    public init(validating text: String, maxLength: Int = 4096) throws(AlbumFieldError) {
        var text = text
        // Byte by byte, without building strings: 100,000 albums are validated at start-up.
        let parsed = text.withUTF8 { CoverURL.parse($0, maxLength: maxLength) }
        _ = try parsed.get()
        string = text
    }

    private struct Parts {
        var schemeEnd: Int
        var host: Range<Int>
        var port: Range<Int>
    }

    private static func parse(_ bytes: UnsafeBufferPointer<UInt8>, maxLength: Int) -> Result<Parts, AlbumFieldError> {
        guard !bytes.isEmpty else { return .failure(.invalidURL("is empty")) }
        guard bytes.count <= maxLength else {
            return .failure(.invalidURL("is \(bytes.count) bytes long (limit \(maxLength))"))
        }
        if let bad = bytes.first(where: { $0 <= 0x20 || $0 >= 0x7F }) {
            let what = bad == 0x20 ? "a space" : (bad >= 0x80 ? "non-ASCII characters" : "control characters")
            return .failure(.invalidURL("contains \(what); percent-encode it"))
        }
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else { return .failure(.invalidURL("is not an absolute URL")) }
        let scheme = bytes[..<colon]
        guard equalsIgnoringCase(scheme, http) || equalsIgnoringCase(scheme, https) else {
            let name = String(decoding: scheme, as: UTF8.self).lowercased()
            return .failure(.invalidURL("uses the scheme '\(name.prefix(32))'; only http and https are fetched"))
        }
        let slash = UInt8(ascii: "/")
        guard bytes.count >= colon + 3, bytes[colon + 1] == slash, bytes[colon + 2] == slash else {
            return .failure(.invalidURL("has no host"))
        }
        let authorityStart = colon + 3
        let authorityEnd = bytes[authorityStart...].firstIndex { $0 == slash || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") } ?? bytes.count
        let hostPortStart = (bytes[authorityStart..<authorityEnd].lastIndex(of: UInt8(ascii: "@")) ?? authorityStart - 1) + 1
        var host = hostPortStart..<authorityEnd
        var port = authorityEnd..<authorityEnd
        let bracketed = hostPortStart < authorityEnd && bytes[hostPortStart] == UInt8(ascii: "[")
        if bracketed {
            guard let close = bytes[host].firstIndex(of: UInt8(ascii: "]")) else {
                return .failure(.invalidURL("has a malformed IPv6 host"))
            }
            host = hostPortStart..<(close + 1)
            if close + 1 < authorityEnd {
                guard bytes[close + 1] == UInt8(ascii: ":") else { return .failure(.invalidURL("has a malformed host")) }
                port = (close + 2)..<authorityEnd
            }
        } else if let portColon = bytes[host].lastIndex(of: UInt8(ascii: ":")) {
            host = hostPortStart..<portColon
            port = (portColon + 1)..<authorityEnd
        }
        guard host.count > (bracketed ? 2 : 0) else { return .failure(.invalidURL("has no host")) }
        if !port.isEmpty, !isValidPort(bytes[port]) { return .failure(.invalidURL("has an invalid port")) }
        return .success(Parts(schemeEnd: colon, host: host, port: port))
    }

    /// 1–65535 in at most five digits (no sign: libcurl refuses `:+80` as a bad URL).
    private static func isValidPort(_ text: Slice<UnsafeBufferPointer<UInt8>>) -> Bool {
        guard text.count <= 5, !text.isEmpty, text.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return false }
        let value = text.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
        return (1...65535).contains(value)
    }

    private static let http = Array("http".utf8)
    private static let https = Array("https".utf8)

    /// `bytes` equals `word` (lower-case ASCII) up to ASCII case.
    private static func equalsIgnoringCase(_ bytes: Slice<UnsafeBufferPointer<UInt8>>, _ word: [UInt8]) -> Bool {
        guard bytes.count == word.count else { return false }
        let lowered = bytes.lazy.map { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) ? $0 | 0x20 : $0 }
        return zip(lowered, word).allSatisfy { $0 == $1 }
    }

    public var description: String { string }

    public static func < (lhs: CoverURL, rhs: CoverURL) -> Bool { lhs.string < rhs.string }
}
