import CoverdBase

/// How covers are downloaded.
public struct FetchSettings: Sendable, Equatable {
    /// Transfers at once.
    public var concurrency = 16
    /// Transfers at once to one scheme://host:port.
    public var perHost = 6
    public var connectTimeout: Duration = .seconds(10)
    /// The whole transfer, redirects included.
    public var totalTimeout: Duration = .seconds(120)
    /// A transfer slower than `lowSpeedLimit` bytes/s for `lowSpeedTime` is abandoned.
    public var lowSpeedLimit = 1024
    public var lowSpeedTime: Duration = .seconds(15)
    /// Larger bodies are refused, whether or not the server announces their size.
    public var maxBytes = 32 * 1024 * 1024
    public var maxRedirects = 5
    /// A PEM bundle of extra certificate authorities to trust. Verification itself is never off.
    public var caFile: String?
    /// How to reach whoever runs this coverd (`sources.contact`), sent in
    /// every request's User-Agent as MusicBrainz asks; empty: none.
    public var contact = ""

    public init() {}
}
