import CoverdModel

/// What a lookup starts from: the ids an album's record gives, and its
/// artist and title for a search. Albums with the same request share one lookup.
public struct LookupRequest: Sendable, Hashable {
    public var releaseID: MusicBrainzID?
    public var releaseGroupID: MusicBrainzID?
    public var artist: String
    public var title: String

    public init(releaseID: MusicBrainzID?, releaseGroupID: MusicBrainzID?, artist: String, title: String) {
        self.releaseID = releaseID
        self.releaseGroupID = releaseGroupID
        self.artist = artist
        self.title = title
    }

    /// Whether the record gives a MusicBrainz id: the archive is asked first, by it.
    public var hasIDs: Bool { releaseID != nil || releaseGroupID != nil }

    /// The request that finds `album`'s cover from what its record says of it.
    public init(_ album: Album) {
        self.init(releaseID: album.releaseID, releaseGroupID: album.releaseGroupID, artist: album.artist, title: album.title)
    }
}
