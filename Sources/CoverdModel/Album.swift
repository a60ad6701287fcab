/// One album as read from a record: what coverd needs to find, fetch and name its cover.
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
        let coverURL: CoverURL?
        let releaseID: MusicBrainzID?
        let releaseGroupID: MusicBrainzID?
        let record: String
        let position: RecordPosition

        init(
            id: AlbumID, title: String, artist: String, year: String?, genre: String?, coverURL: CoverURL?,
            releaseID: MusicBrainzID?, releaseGroupID: MusicBrainzID?, record: String, position: RecordPosition
        ) {
            self.id = id
            self.title = title
            self.artist = artist
            self.year = year
            self.genre = genre
            self.coverURL = coverURL
            self.releaseID = releaseID
            self.releaseGroupID = releaseGroupID
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
    /// The record's `cover_url`; nil when the cover is to be looked up.
    public var coverURL: CoverURL? { fields.coverURL }
    /// The record's MusicBrainz release id (`mbid`), if it has one.
    public var releaseID: MusicBrainzID? { fields.releaseID }
    /// The record's MusicBrainz release-group id (`release_group_mbid`), if it has one.
    public var releaseGroupID: MusicBrainzID? { fields.releaseGroupID }
    /// Absolute path of the record file the album came from.
    public var record: String { fields.record }
    /// Where in that file: "album 3 (line 12)"; for messages only.
    public var position: String { fields.position.description }
    /// Where in that file, as numbers: which entry of its list (`coverd remove` cuts it out).
    public var recordPosition: RecordPosition { fields.position }

    public init(
        id: AlbumID, title: String, artist: String, year: String? = nil, genre: String? = nil,
        coverURL: CoverURL?, releaseID: MusicBrainzID? = nil, releaseGroupID: MusicBrainzID? = nil, record: String,
        position: RecordPosition = .unspecified
    ) {
        fields = Fields(
            id: id, title: title, artist: artist, year: year, genre: genre, coverURL: coverURL, releaseID: releaseID,
            releaseGroupID: releaseGroupID, record: record, position: position)
    }

    /// True when the album's own data differs, ignoring where it was read from.
    /// A moved or renamed record file is not a change to the album.
    public func differsInContent(from other: Album) -> Bool {
        if fields === other.fields { return false }
        return id != other.id || title != other.title || artist != other.artist || year != other.year
            || genre != other.genre || coverURL != other.coverURL || releaseID != other.releaseID
            || releaseGroupID != other.releaseGroupID
    }

    public static func == (lhs: Album, rhs: Album) -> Bool {
        lhs.fields === rhs.fields
            || (!lhs.differsInContent(from: rhs) && lhs.record == rhs.record && lhs.fields.position == rhs.fields.position)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        hasher.combine(coverURL)
        hasher.combine(record)
    }
}
