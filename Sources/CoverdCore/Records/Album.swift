/// One album as read from a record: what coverd needs to fetch and name its cover.
///
/// A value type whose fields live in one shared, immutable box: the catalog,
/// the planner and bus messages all hold the same album, and at 100,000
/// albums eight inline strings per copy would cost tens of megabytes.
public struct Album: Sendable, Hashable {
    /// Immutable after creation, hence `Sendable` without a lock.
    private final class Fields: Sendable {
        let id: AlbumID
        let title: String
        let artist: String
        let year: String?
        let genre: String?
        let coverURL: CoverURL
        let record: String
        let position: String

        init(id: AlbumID, title: String, artist: String, year: String?, genre: String?, coverURL: CoverURL, record: String, position: String) {
            self.id = id
            self.title = title
            self.artist = artist
            self.year = year
            self.genre = genre
            self.coverURL = coverURL
            self.record = record
            self.position = position
        }
    }

    private let fields: Fields

    public var id: AlbumID { fields.id }
    public var title: String { fields.title }
    public var artist: String { fields.artist }
    public var year: String? { fields.year }
    public var genre: String? { fields.genre }
    public var coverURL: CoverURL { fields.coverURL }
    /// Absolute path of the record file the album came from.
    public var record: String { fields.record }
    /// Where in that file: "album 3 (line 12)"; for messages only.
    public var position: String { fields.position }

    public init(
        id: AlbumID, title: String, artist: String, year: String? = nil, genre: String? = nil,
        coverURL: CoverURL, record: String, position: String = ""
    ) {
        fields = Fields(id: id, title: title, artist: artist, year: year, genre: genre, coverURL: coverURL, record: record, position: position)
    }

    /// True when the album's own data differs, ignoring where it was read from.
    /// A moved or renamed record file is not a change to the album.
    public func differsInContent(from other: Album) -> Bool {
        if fields === other.fields { return false }
        return id != other.id || title != other.title || artist != other.artist || year != other.year
            || genre != other.genre || coverURL != other.coverURL
    }

    public static func == (lhs: Album, rhs: Album) -> Bool {
        lhs.fields === rhs.fields || (!lhs.differsInContent(from: rhs) && lhs.record == rhs.record && lhs.position == rhs.position)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        hasher.combine(coverURL)
        hasher.combine(record)
    }
}

/// An absolute http or https URL that passed record validation.
public struct CoverURL: Sendable, Hashable, CustomStringConvertible, Comparable {
    public let string: String

    /// `scheme://host:port`, lower-cased: the unit of per-host limits.
    /// Derived when asked (once per fetch) rather than stored with every album.
    public var origin: String {
        // The string was validated, so every part below is present.
        (try? CoverURL.origin(of: string)) ?? string
    }

    /// Accepts only absolute `http`/`https` URLs with a host, made of printable
    /// ASCII (spaces and non-ASCII must be percent-encoded), at most `maxLength` bytes.
    public init(validating text: String, maxLength: Int = 4096) throws(AlbumFieldError) {
        _ = try CoverURL.origin(of: text, maxLength: maxLength)
        string = text
    }

    /// Validates `text` and returns its origin.
    private static func origin(of text: String, maxLength: Int = 4096) throws(AlbumFieldError) -> String {
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
        return "\(scheme)://\(host.lowercased())" + (port.isEmpty ? "" : ":\(port)")
    }

    public var description: String { string }

    public static func < (lhs: CoverURL, rhs: CoverURL) -> Bool { lhs.string < rhs.string }
}
