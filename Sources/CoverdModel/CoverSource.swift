/// Where an album's cover URL came from: its record, or a lookup (contract
/// §7) through the release's front image, the release group's, or a search.
public enum CoverSource: String, Sendable, Equatable, CaseIterable {
    /// The record's `cover_url`.
    case url
    /// The Cover Art Archive's front image of the release (`mbid`).
    case release
    /// The archive's front image of the release group, given or learnt from MusicBrainz.
    case releaseGroup = "release-group"
    /// A MusicBrainz search by artist and title.
    case search
}
