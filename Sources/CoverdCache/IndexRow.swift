import CoverdModel
import Foundation

/// One album's row in the index: everything `status` shows and everything a
/// restart needs to avoid downloading, or looking up, again.
public struct IndexRow: Sendable, Equatable {
    public var id: AlbumID
    public var title: String
    public var artist: String
    public var year: String?
    public var genre: String?
    /// The record's `cover_url`; nil for an album whose cover is looked up.
    public var coverURL: String?
    /// The record's MusicBrainz release id, as given.
    public var releaseID: String?
    /// The record's MusicBrainz release-group id, as given.
    public var releaseGroupID: String?
    public var record: String
    public var state: CoverState
    public var error: String?
    public var attempts: Int
    public var nextRetry: Date?
    /// Size and modification time of the cached file, to notice it changed behind our back.
    public var bytes: Int?
    public var fileMTime: Int64?
    public var httpStatus: Int?
    /// How the cover's URL was found; nil until known.
    public var source: CoverSource?
    /// The release id a lookup went through, where the record gave none.
    public var foundReleaseID: String?
    /// The release-group id a lookup went through, where the record gave none.
    public var foundReleaseGroupID: String?
    /// The URL the cached cover was downloaded from (after a lookup, before redirects); nil until cached.
    public var resolvedURL: String?
    public var updatedAt: Date
    /// When the album left the records; its cover is kept aside (`removed/`)
    /// until `cache.keep_removed` after this. Nil for an album in the records.
    public var removedAt: Date?
    /// The cached cover's validators, as the server sent them with its body: sent back to revalidate it.
    public var etag: String?
    public var lastModified: String?
    /// When the cached cover was last downloaded or confirmed (a 304); nil for one not cached.
    public var checkedAt: Date?
    /// A `coverd refresh` taken while no daemon ran, acted on at the next start.
    public var refresh: RefreshMark?

    public init(id: AlbumID, title: String, artist: String, record: String, state: CoverState, updatedAt: Date) {
        self.id = id
        self.title = title
        self.artist = artist
        self.record = record
        self.state = state
        attempts = 0
        self.updatedAt = updatedAt
    }

    public init(album: Album, state: CoverState, updatedAt: Date) {
        self.init(id: album.id, title: album.title, artist: album.artist, record: album.record, state: state, updatedAt: updatedAt)
        year = album.year
        genre = album.genre
        coverURL = album.coverURL?.string
        releaseID = album.releaseID?.rawValue
        releaseGroupID = album.releaseGroupID?.rawValue
        if album.coverURL != nil {
            source = .url
            if state == .cached { resolvedURL = coverURL }
        }
    }

    /// The album as the index remembers it; nil if a stored URL or id is no longer valid.
    public var album: Album? {
        var url: CoverURL?
        if let coverURL {
            guard let valid = try? CoverURL(validating: coverURL) else { return nil }
            url = valid
        }
        let release = releaseID.flatMap(MusicBrainzID.init)
        let group = releaseGroupID.flatMap(MusicBrainzID.init)
        guard (release == nil) == (releaseID == nil), (group == nil) == (releaseGroupID == nil) else { return nil }
        return Album(
            id: id, title: title, artist: artist, year: year, genre: genre, coverURL: url, releaseID: release,
            releaseGroupID: group, record: record, position: .fromIndex)
    }

    /// The cover file's size and modification time when the row was written, if it has them.
    package var stamp: FileStamp? {
        guard let bytes, let fileMTime else { return nil }
        return FileStamp(bytes: bytes, mtime: fileMTime)
    }
}

/// A change to the index; many are applied in one transaction.
public enum IndexChange: Sendable {
    /// Boxed: batches of thousands of changes are queued, and a row is large.
    indirect case upsert(IndexRow)
    case delete(AlbumID)
}
