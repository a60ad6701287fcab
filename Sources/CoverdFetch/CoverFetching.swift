import CoverdBase
import CoverdModel

/// Identifies one fetch so that it can be cancelled.
public struct FetchID: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt64
    public init(_ rawValue: UInt64) { self.rawValue = rawValue }
    public var description: String { "#\(rawValue)" }
}

/// A body downloaded with a 2xx status.
public struct FetchedBody: Sendable {
    public var bytes: [UInt8]
    public var httpStatus: Int
    public var effectiveURL: String
    public var duration: Duration
    /// When the (last) request went out, after name lookup, connection and TLS; nil when unknown.
    public var requestSent: ContinuousClock.Instant?
    /// The final response's `ETag` and `Last-Modified`, kept to revalidate the cover later.
    public var validators = Validators(etag: nil, lastModified: nil)
}

/// A revalidation's answer: `304 Not Modified`, the cached cover confirmed.
public struct NotModified: Sendable {
    public var effectiveURL: String
    public var duration: Duration
    /// Validators the 304 carried; a server may send new ones, which replace the old.
    public var validators: Validators
}

/// Why a download did not produce a body, and whether trying again may help.
public struct FetchFailure: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// Connection refused or reset, DNS failure, a body cut short.
        case connection
        case timeout
        /// A non-2xx final response.
        case http(Int)
        /// Certificate verification or another TLS failure.
        case tls
        case tooLarge
        case tooManyRedirects
        /// A URL or redirect target with a scheme other than http/https.
        case disallowedProtocol
        case cancelled
        case other
    }

    public var kind: Kind
    public var message: String
    public var httpStatus: Int?
    /// The server's `Retry-After`, when it sent one with the final response.
    public var retryAfter: Duration?
    public var duration: Duration
    /// When the request went out, if it did (see `FetchedBody.requestSent`).
    public var requestSent: ContinuousClock.Instant?

    public init(kind: Kind, message: String, httpStatus: Int? = nil, retryAfter: Duration? = nil, duration: Duration = .zero) {
        self.kind = kind
        self.message = message
        self.httpStatus = httpStatus
        self.retryAfter = retryAfter
        self.duration = duration
    }

    /// Connection errors, timeouts, 408, 429 and 5xx are worth retrying soon (contract §4).
    public var isTransient: Bool {
        switch kind {
        case .connection, .timeout: return true
        case .http(let status): return status == 408 || status == 429 || (500...599).contains(status)
        case .tls, .tooLarge, .tooManyRedirects, .disallowedProtocol, .cancelled, .other: return false
        }
    }

    public var description: String { message }
}

/// How a fetch ended.
public enum FetchOutcome: Sendable {
    case success(FetchedBody)
    /// Only for a `.revalidation`: the server says the cached cover is current.
    case notModified(NotModified)
    case failure(FetchFailure)
}

/// What a fetch is for, which decides how it waits for its turn and what it holds.
public enum FetchPurpose: Sendable, Equatable {
    /// A cover: waits its turn under `concurrency` and `per_host`, and its
    /// body counts against the body budget until `bodyConsumed(bytes:)`.
    case cover
    /// A web service's small answer, at most `limit` bytes, which its caller
    /// paces (MusicBrainz's `RatePacer`) and reads at once: it starts when
    /// asked (a few at once; more wait their turn, FIFO), outside the covers'
    /// admission limits and the body budget, so that the caller's spacing is
    /// the spacing the server sees.
    case answer(limit: Int)
    /// A cached cover asked again with its validators (contract §8): waits its
    /// turn as a cover does; a `304` ends it with `.notModified`, holding no body.
    case revalidation(Validators)
}

/// Downloads cover bodies. Implementations run many transfers at once.
///
/// `completion` is called exactly once per `fetch`, on an unspecified thread,
/// with `.cancelled` when the fetch was cancelled or the fetcher shut down.
///
/// Backpressure: every `.cover` fetch's body counts against the fetcher's body
/// budget, in bytes, while it is received and, once delivered with `.success`,
/// until the caller calls `bodyConsumed(bytes:)` with its size; while the
/// budget is spent no new transfer starts and running ones are paused (all but
/// the oldest), so memory stays bounded however slow the consumer and however
/// large the covers.
public protocol CoverFetching: Sendable {
    func fetch(_ id: FetchID, url: CoverURL, purpose: FetchPurpose, completion: @escaping @Sendable (FetchOutcome) -> Void)
    func cancel(_ id: FetchID)
    /// A cover's body delivered with `.success`, of `bytes` bytes, has been written or dropped.
    func bodyConsumed(bytes: Int)
    /// New limits and timeouts, for transfers started from now on; returns
    /// what is worth a warning but did not stop them (an unreadable system CA bundle).
    @discardableResult
    func apply(_ settings: FetchSettings) throws(SystemError) -> [String]
    /// Cancels everything and stops; returns when no transfer is running.
    func shutdown()
}

extension CoverFetching {
    /// A cover, under the settings' size cap.
    public func fetch(_ id: FetchID, url: CoverURL, completion: @escaping @Sendable (FetchOutcome) -> Void) {
        fetch(id, url: url, purpose: .cover, completion: completion)
    }
}
