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

    /// An album's request; nil for one whose record gives its cover's URL.
    public init?(_ album: Album) {
        guard album.coverURL == nil else { return nil }
        self.init(releaseID: album.releaseID, releaseGroupID: album.releaseGroupID, artist: album.artist, title: album.title)
    }
}
