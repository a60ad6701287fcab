/// Why one album in a record was rejected. Its siblings still load.
public enum AlbumFieldError: Error, Sendable, Equatable, CustomStringConvertible {
    case notAnObject(found: String)
    case missingField(String)
    case wrongType(field: String, expected: String, found: String)
    case emptyField(String)
    case tooLong(field: String, length: Int, limit: Int)
    case controlCharacters(field: String)
    case invalidURL(String)
    case invalidID(String)
    /// A MusicBrainz id field (`mbid`, `release_group_mbid` or an alias) that is not a UUID.
    case invalidMusicBrainzID(field: String, text: String)

    public var description: String {
        switch self {
        case .notAnObject(let found): return "expected an album object, found \(found)"
        case .missingField(let field): return "missing required field '\(field)'"
        case .wrongType(let field, let expected, let found): return "'\(field)' must be \(expected), found \(found)"
        case .emptyField(let field): return "'\(field)' is empty"
        case .tooLong(let field, let length, let limit): return "'\(field)' is \(length) characters long (limit \(limit))"
        case .controlCharacters(let field): return "'\(field)' contains control characters"
        case .invalidURL(let reason): return "'cover_url' \(reason)"
        case .invalidID(let text):
            return "'id' \"\(text)\" is not a valid id (letters, digits, '.', '_', '-'; starting with a letter or digit; at most 128)"
        case .invalidMusicBrainzID(let field, let text):
            return "'\(field)' \"\(text)\" is not a MusicBrainz id (a UUID: 8-4-4-4-12 hexadecimal digits)"
        }
    }
}
