import Logging

/// Everything the daemon can be told, with the defaults documented in
/// `config/coverd.toml`. Precedence: command-line flag, then file, then default.
public struct Configuration: Sendable, Equatable {
    /// The watched directory of album records.
    public var recordsDirectory: String
    /// Covers (`covers/<id>.png`) and the index live here.
    public var cacheDirectory: String
    public var logLevel: Logger.Level = .info
    public var logTarget: LogTarget = .auto
    public var fetch = FetchSettings()
    public var retry = RetryPolicy()
    public var images = ImageLimits()
    /// How converted (or scaled) covers are written.
    public var imageOutput = ImageOutput()
    public var records = RecordLimits()
    /// Free space a cover write leaves on the cache's filesystem (0: no check).
    public var minFreeBytes = 2 * 1024 * 1024
    /// The file these settings were read from, if any.
    public var file: String?

    public init(recordsDirectory: String, cacheDirectory: String) {
        self.recordsDirectory = recordsDirectory
        self.cacheDirectory = cacheDirectory
    }

    /// The defaults for this environment (contract §2).
    public static func defaults(environment: [String: String]) -> Configuration {
        let paths = DefaultPaths(environment: environment)
        return Configuration(recordsDirectory: paths.records, cacheDirectory: paths.cache)
    }
}

/// Where log lines go: the journal, standard error, or the journal only when
/// standard error is already connected to it (`JOURNAL_STREAM`).
public enum LogTarget: String, Sendable, CaseIterable {
    case auto, journal, stderr

    /// `auto` made concrete: the journal when standard error is the journal stream systemd connected.
    public func resolved(environment: [String: String]) -> LogTarget {
        guard self == .auto else { return self }
        return standardErrorIsJournal(environment: environment) ? .journal : .stderr
    }
}

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

    public init() {}
}

/// When failed covers are tried again.
public struct RetryPolicy: Sendable, Equatable {
    /// The first backoff for transient failures; it doubles with each attempt.
    public var initialDelay: Duration = .seconds(1)
    /// Backoff never exceeds this.
    public var maxDelay: Duration = .seconds(3600)
    /// Albums marked failed are tried again after this.
    public var failedInterval: Duration = .seconds(86_400)
    /// Failures to write the cache (a full disk) are retried at least this often.
    public var storageMaxDelay: Duration = .seconds(30)

    public init() {}
}

extension Duration {
    /// The duration in seconds as a Double, for arithmetic with dates and backoff.
    public var seconds: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }

    public var milliseconds: Int64 {
        let parts = components
        return parts.seconds * 1000 + parts.attoseconds / 1_000_000_000_000_000
    }
}
