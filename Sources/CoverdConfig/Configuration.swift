import Logging
import CoverdFetch
import CoverdImages
import CoverdLookup
import CoverdRecords
import CoverdSync

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
    /// `[sources]`: where lookups ask (its `contact` is `fetch.contact`, its
    /// `lookup` is `records.coverURLRequired`, its `recheck_interval` is
    /// `retry.lookupRecheck`).
    public var sources = LookupSettings()
    /// How long the cover of an album that left the records is kept in `removed/` (`cache.keep_removed`; zero: not kept).
    public var keepRemoved: Duration = .seconds(604_800)
    /// After how long a cached cover is outdated and revalidated (`freshness.max_age`; zero: never).
    public var freshnessMaxAge: Duration = .seconds(2_592_000)
    /// Free space a cover write leaves on the cache's filesystem (0: no check).
    public var minFreeBytes = 2 * 1024 * 1024
    /// The file these settings were read from, if any.
    public var file: String?

    /// The lookup stage's share of these settings: `sources`, with the
    /// archive thumbnail `images.max_dimension` calls for.
    public var lookup: LookupSettings {
        var lookup = sources
        lookup.thumbnail = LookupSettings.thumbnail(for: imageOutput.maxDimension)
        return lookup
    }

    /// The coordinator's share of these settings.
    public var sync: SyncSettings {
        SyncSettings(retry: retry, imageLimits: images, imageOutput: imageOutput, maxBodyBytes: fetch.maxBytes, keepRemoved: keepRemoved,
            freshnessMaxAge: freshnessMaxAge)
    }

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
}
