import CoverdBase
import CoverdModel

/// Limits applied to record files and the albums in them.
public struct RecordLimits: Sendable, Equatable {
    /// Larger files are refused without being parsed.
    public var maxFileBytes: Int = 16 * 1024 * 1024
    /// Deeper JSON is refused (albums need depth 3).
    public var maxDepth: Int = 32
    public var maxTextLength: Int = 1024
    public var maxURLLength: Int = 4096
    /// Whether an album needs a `cover_url` (`sources.lookup = false`);
    /// otherwise one without it is looked up.
    public var coverURLRequired = false

    public init() {}
}

/// A field value as found in a record, whatever the record's format.
public enum RecordFieldValue: Sendable, Equatable {
    case string(String)
    case integer(Int)
    case null
    /// Any other type; the payload names it for the error message.
    case other(String)

    var typeDescription: String {
        switch self {
        case .string: return "a string"
        case .integer: return "an integer"
        case .null: return "null"
        case .other(let name): return name
        }
    }
}

/// Turns the fields of one album, from JSON or from an archive, into a valid
/// `Album` or the first reason it is not one.
public struct AlbumValidator: Sendable {
    public var limits: RecordLimits

    public init(limits: RecordLimits = RecordLimits()) {
        self.limits = limits
    }

    public func album(
        from fields: [String: RecordFieldValue], record: String, position: RecordPosition
    ) throws(AlbumFieldError) -> Album {
        let title = try requiredText(fields, ["title", "album"])
        let artist = try requiredText(fields, ["artist"])
        let url: CoverURL?
        if limits.coverURLRequired || AlbumValidator.isPresent(fields, ["cover_url", "coverUrl"]) {
            let urlText = try requiredText(fields, ["cover_url", "coverUrl"], trim: false)
            url = try CoverURL(validating: urlText, maxLength: limits.maxURLLength)
        } else {
            url = nil
        }
        let releaseID = try optionalMusicBrainzID(fields, ["mbid", "musicbrainz_albumid"])
        let releaseGroupID = try optionalMusicBrainzID(fields, ["release_group_mbid", "musicbrainz_releasegroupid"])
        let year = try optionalYear(fields["year"])
        let genre = try optionalText(fields["genre"], name: "genre")
        let id: AlbumID
        switch fields["id"] {
        case nil, .null?: id = AlbumID.derived(artist: artist, title: title)
        case .string(let text)?: id = try AlbumID(validating: text)
        case let other?: throw .wrongType(field: "id", expected: "a string", found: other.typeDescription)
        }
        return Album(
            id: id, title: title, artist: artist, year: year, genre: genre, coverURL: url, releaseID: releaseID,
            releaseGroupID: releaseGroupID, record: record, position: position)
    }

    /// The names of every field the validator reads, aliases included.
    public static let fieldNames = [
        "id", "title", "album", "artist", "cover_url", "coverUrl", "year", "genre",
        "mbid", "musicbrainz_albumid", "release_group_mbid", "musicbrainz_releasegroupid",
    ]

    /// Whether the validator reads `key`: a switch rather than a set, since
    /// every member of every album of a start-up is asked about and a set hashes.
    public static func isFieldName(_ key: String) -> Bool {
        switch key {
        case "id", "title", "album", "artist", "cover_url", "coverUrl", "year", "genre",
            "mbid", "musicbrainz_albumid", "release_group_mbid", "musicbrainz_releasegroupid":
            return true
        default:
            return false
        }
    }

    /// Whether one of `names` holds a value (null counts as absent).
    private static func isPresent(_ fields: [String: RecordFieldValue], _ names: [String]) -> Bool {
        names.contains { fields[$0] != nil && fields[$0] != .null }
    }

    /// The first of `names` that is present, as a MusicBrainz id; nil when none is.
    private func optionalMusicBrainzID(
        _ fields: [String: RecordFieldValue], _ names: [String]
    ) throws(AlbumFieldError) -> MusicBrainzID? {
        guard let name = names.first(where: { fields[$0] != nil && fields[$0] != .null }), let value = fields[name] else {
            return nil
        }
        guard case .string(let raw) = value else {
            throw .wrongType(field: name, expected: "a string", found: value.typeDescription)
        }
        let text = try checkedText(raw, name: name, trim: true, limit: 64)
        guard let id = MusicBrainzID(text) else { throw .invalidMusicBrainzID(field: name, text: String(text.prefix(64))) }
        return id
    }

    /// The first of `names` that is present (aliases), as a non-empty string.
    private func requiredText(
        _ fields: [String: RecordFieldValue], _ names: [String], trim: Bool = true
    ) throws(AlbumFieldError) -> String {
        guard let name = names.first(where: { fields[$0] != nil && fields[$0] != .null }),
            let value = fields[name]
        else {
            throw .missingField(names[0])
        }
        guard case .string(let raw) = value else {
            throw .wrongType(field: name, expected: "a string", found: value.typeDescription)
        }
        return try checkedText(raw, name: name, trim: trim, limit: names[0] == "cover_url" ? limits.maxURLLength : limits.maxTextLength)
    }

    private func optionalText(_ value: RecordFieldValue?, name: String) throws(AlbumFieldError) -> String? {
        switch value {
        case nil, .null?: return nil
        case .string(let raw)?:
            let text = try checkedText(raw, name: name, trim: true, limit: limits.maxTextLength, allowEmpty: true)
            return text.isEmpty ? nil : text
        case let other?: throw .wrongType(field: name, expected: "a string", found: other.typeDescription)
        }
    }

    private func optionalYear(_ value: RecordFieldValue?) throws(AlbumFieldError) -> String? {
        switch value {
        case nil, .null?: return nil
        case .integer(let number)?:
            guard (0...99_999).contains(number) else {
                throw .wrongType(field: "year", expected: "a year between 0 and 99999", found: String(number))
            }
            return String(number)
        case .string(let raw)?:
            let text = try checkedText(raw, name: "year", trim: true, limit: 32, allowEmpty: true)
            return text.isEmpty ? nil : text
        case let other?: throw .wrongType(field: "year", expected: "a string or an integer", found: other.typeDescription)
        }
    }

    private func checkedText(
        _ raw: String, name: String, trim: Bool, limit: Int, allowEmpty: Bool = false
    ) throws(AlbumFieldError) -> String {
        switch ASCIIText.check(raw, trim: trim, limit: limit) {
        case .accepted: return raw
        case .tooLong(let length): throw .tooLong(field: name, length: length, limit: limit)
        case .controlCharacters: throw .controlCharacters(field: name)
        case .empty:
            guard allowEmpty else { throw .emptyField(name) }
            return raw
        case .general: return try AlbumValidator.checkedScalars(raw, name: name, trim: trim, limit: limit, allowEmpty: allowEmpty)
        }
    }

    /// The general check, scalar by scalar (the ASCII shortcut is tested against it).
    static func checkedScalars(
        _ raw: String, name: String, trim: Bool, limit: Int, allowEmpty: Bool
    ) throws(AlbumFieldError) -> String {
        // Count before trimming so a 1 MiB string costs one pass, not several.
        let length = raw.unicodeScalars.count
        guard length <= limit else { throw .tooLong(field: name, length: length, limit: limit) }
        if raw.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }) {
            throw .controlCharacters(field: name)
        }
        let text = trim ? raw.trimmingWhitespace : raw
        if text.isEmpty && !allowEmpty { throw .emptyField(name) }
        return text
    }
}

/// The common case of `checkedText`, decided on UTF-8 bytes without a copy:
/// ASCII with nothing to trim, where walking Unicode scalars and copying
/// every trimmed field cost a restart over many albums. Anything else goes
/// the general way, which gives the same answers for ASCII.
enum ASCIIText {
    enum Verdict: Equatable {
        case accepted, tooLong(Int), controlCharacters, empty
        /// Not ASCII, or a space to trim, or not contiguous: check scalar by scalar.
        case general
    }

    static func check(_ text: String, trim: Bool, limit: Int) -> Verdict {
        text.utf8.withContiguousStorageIfAvailable { bytes -> Verdict in
            guard let first = bytes.first, let last = bytes.last else { return .empty }
            // Other ASCII whitespace (tab, newlines) is a control character, refused below.
            if trim && (first == 0x20 || last == 0x20) { return .general }
            var control = false
            for byte in bytes {
                if byte >= 0x80 { return .general }
                if byte < 0x20 || byte == 0x7F { control = true }
            }
            // The general order: length, then control characters.
            if bytes.count > limit { return .tooLong(bytes.count) }
            return control ? .controlCharacters : .accepted
        } ?? .general
    }
}
