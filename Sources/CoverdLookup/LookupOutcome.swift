import CoverdFetch
import CoverdModel

/// Where a lookup found a cover: the URL it was downloaded from (before
/// redirects), how it was found, and the ids it went through.
public struct Resolution: Sendable, Equatable {
    public var url: CoverURL
    public var source: CoverSource
    public var releaseID: MusicBrainzID?
    public var releaseGroupID: MusicBrainzID?

    public init(url: CoverURL, source: CoverSource, releaseID: MusicBrainzID?, releaseGroupID: MusicBrainzID?) {
        self.url = url
        self.source = source
        self.releaseID = releaseID
        self.releaseGroupID = releaseGroupID
    }
}

/// How a lookup ended.
public enum LookupOutcome: Sendable {
    /// A cover, downloaded: the body counts against the fetcher's body
    /// budget until `bodyConsumed(bytes:)`, like any fetched body.
    case found(Resolution, FetchedBody)
    /// Nothing anywhere: the message begins "no cover found" and says what was tried.
    case notFound(String)
    /// A request failed: transient ones (a 503, a timeout) are tried again
    /// with backoff; others say what answered wrongly.
    case failed(FetchFailure)
}
