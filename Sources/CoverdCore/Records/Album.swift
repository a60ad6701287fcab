/// One album as read from a record: what coverd needs to fetch and name its cover.
public struct Album: Sendable, Hashable {
    public var id: AlbumID
    public var title: String
    public var artist: String
    public var year: String?
    public var genre: String?
    public var coverURL: CoverURL
    /// Absolute path of the record file the album came from.
    public var record: String
    /// Where in that file: "album 3 (line 12)"; for messages only.
    public var position: String

    public init(
        id: AlbumID, title: String, artist: String, year: String? = nil, genre: String? = nil,
        coverURL: CoverURL, record: String, position: String = ""
    ) {
        self.id = id
        self.title = title
        self.artist = artist
        self.year = year
        self.genre = genre
        self.coverURL = coverURL
        self.record = record
        self.position = position
    }

    /// True when the album's own data differs, ignoring where it was read from.
    /// A moved or renamed record file is not a change to the album.
    public func differsInContent(from other: Album) -> Bool {
        id != other.id || title != other.title || artist != other.artist || year != other.year
            || genre != other.genre || coverURL != other.coverURL
    }
}

/// An absolute http or https URL that passed record validation.
public struct CoverURL: Sendable, Hashable, CustomStringConvertible, Comparable {
    public let string: String
    /// `scheme://host:port`, lower-cased: the unit of per-host limits.
    public let origin: String

    /// Accepts only absolute `http`/`https` URLs with a host, made of printable
    /// ASCII (spaces and non-ASCII must be percent-encoded), at most `maxLength` bytes.
    public init(validating text: String, maxLength: Int = 4096) throws(AlbumFieldError) {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty else { throw .invalidURL("is empty") }
        guard bytes.count <= maxLength else {
            throw .invalidURL("is \(bytes.count) bytes long (limit \(maxLength))")
        }
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
        let afterSlashes = rest.dropFirst(2)
        let authority = afterSlashes.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        let hostPort = authority.split(separator: "@", omittingEmptySubsequences: false).last ?? ""
        let host: Substring
        var port: Substring = ""
        if hostPort.hasPrefix("[") {
            guard let close = hostPort.firstIndex(of: "]") else { throw .invalidURL("has a malformed IPv6 host") }
            host = hostPort[hostPort.startIndex...close]
            let tail = hostPort[hostPort.index(after: close)...]
            if tail.hasPrefix(":") { port = tail.dropFirst() } else if !tail.isEmpty {
                throw .invalidURL("has a malformed host")
            }
        } else if let colon = hostPort.lastIndex(of: ":") {
            host = hostPort[..<colon]
            port = hostPort[hostPort.index(after: colon)...]
        } else {
            host = hostPort
        }
        guard host.count > (host.hasPrefix("[") ? 2 : 0) else { throw .invalidURL("has no host") }
        if !port.isEmpty {
            guard port.count <= 5, let number = Int(port), (1...65535).contains(number) else {
                throw .invalidURL("has an invalid port")
            }
        }
        self.string = text
        self.origin = "\(scheme)://\(host.lowercased())" + (port.isEmpty ? "" : ":\(port)")
    }

    public var description: String { string }

    public static func < (lhs: CoverURL, rhs: CoverURL) -> Bool { lhs.string < rhs.string }
}
