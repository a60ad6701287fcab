import CoverdModel

/// How covers are looked up for albums without a `cover_url`: the part of
/// `[sources]` the lookup stage reads. The rest of the section lives where
/// it acts (`Configuration` maps each key).
public struct LookupSettings: Sendable, Equatable {
    /// MusicBrainz's web service, without a trailing slash.
    public var musicBrainzURL = "https://musicbrainz.org"
    /// The Cover Art Archive, without a trailing slash.
    public var coverArtArchiveURL = "https://coverartarchive.org"
    /// The lowest MusicBrainz search score a result may have to be taken.
    public var minScore = 90
    /// The archive thumbnail to fetch (250, 500 or 1200), or nil for the original.
    public var thumbnail: Int?

    public init() {}

    /// The smallest archive thumbnail at least `maxDimension` pixels on a
    /// side; nil (the original) when there is no limit or it is over 1200.
    public static func thumbnail(for maxDimension: Int?) -> Int? {
        guard let maxDimension else { return nil }
        return [250, 500, 1200].first { $0 >= maxDimension }
    }
}
