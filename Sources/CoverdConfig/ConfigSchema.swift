import Logging
import CoverdBase
import CoverdModel

/// Why one setting's value was refused.
struct ConfigValueError: Error, Sendable {
    var message: String
}

/// Every key `coverd.toml` accepts, and how each is checked and applied.
/// `config/coverd.toml` documents the same keys with their defaults.
package enum ConfigSchema {
    static let keys: [String] = [
        "records", "cache", "cache.directory", "cache.keep_removed", "log_level", "log_target",
        "fetch.concurrency", "fetch.per_host", "fetch.connect_timeout", "fetch.timeout",
        "fetch.low_speed_limit", "fetch.low_speed_time", "fetch.max_bytes", "fetch.max_redirects", "fetch.ca_file",
        "retry.initial_delay", "retry.max_delay", "retry.failed_interval", "retry.storage_max_delay",
        "images.max_side", "images.max_pixels", "images.max_dimension", "images.png_compression",
        "limits.max_record_bytes", "limits.min_free_bytes",
        "sources.musicbrainz_url", "sources.coverartarchive_url", "sources.contact", "sources.min_score",
        "sources.recheck_interval", "sources.lookup", "freshness.max_age",
    ]

    /// Transfers at once, in all and to one host (`fetch.concurrency`, `fetch.per_host`, and their flags).
    package static let transfers = 1...1024

    static func apply(
        key: String, value: ConfigValue, to config: inout Configuration, baseDirectory: String, home: String?
    ) throws(ConfigValueError) {
        func path() throws(ConfigValueError) -> String {
            let text = try string(value)
            guard !text.isEmpty else { throw ConfigValueError(message: "must not be empty") }
            return resolvePath(text, relativeTo: baseDirectory, home: home)
        }
        switch key {
        case "records": config.recordsDirectory = try path()
        // `cache = "dir"`, or a [cache] table, since a key and a table cannot share the name in TOML.
        case "cache", "cache.directory": config.cacheDirectory = try path()
        case "cache.keep_removed": config.keepRemoved = try seconds(value, in: 0...(10 * 365 * 86_400))
        case "freshness.max_age": config.freshnessMaxAge = try seconds(value, in: 0...(10 * 365 * 86_400))
        case "log_level": config.logLevel = try logLevel(value)
        case "log_target":
            let text = try string(value)
            guard let target = LogTarget(rawValue: text) else {
                throw ConfigValueError(message: "must be one of auto, journal, stderr (found \"\(text)\")")
            }
            config.logTarget = target
        case "fetch.concurrency": config.fetch.concurrency = try integer(value, in: transfers)
        case "fetch.per_host": config.fetch.perHost = try integer(value, in: transfers)
        case "fetch.connect_timeout": config.fetch.connectTimeout = try seconds(value, in: 0.1...600)
        case "fetch.timeout": config.fetch.totalTimeout = try seconds(value, in: 1...86_400)
        case "fetch.low_speed_limit": config.fetch.lowSpeedLimit = try integer(value, in: 0...(1 << 30))
        case "fetch.low_speed_time": config.fetch.lowSpeedTime = try seconds(value, in: 1...86_400)
        case "fetch.max_bytes": config.fetch.maxBytes = try integer(value, in: 1024...(1 << 34))
        case "fetch.max_redirects": config.fetch.maxRedirects = try integer(value, in: 0...5)
        case "fetch.ca_file":
            let text = try string(value)
            config.fetch.caFile = text.isEmpty ? nil : resolvePath(text, relativeTo: baseDirectory, home: home)
        case "retry.initial_delay": config.retry.initialDelay = try seconds(value, in: 0.01...3600)
        case "retry.max_delay": config.retry.maxDelay = try seconds(value, in: 1...86_400)
        case "retry.failed_interval": config.retry.failedInterval = try seconds(value, in: 1...(365 * 86_400))
        case "retry.storage_max_delay": config.retry.storageMaxDelay = try seconds(value, in: 0.1...86_400)
        case "images.max_side": config.images.maxSide = try integer(value, in: 1...32767)
        case "images.max_pixels": config.images.maxPixels = try integer(value, in: 1...1_000_000_000)
        case "images.max_dimension":
            let limit = try integer(value, in: 0...32767)
            config.imageOutput.maxDimension = limit == 0 ? nil : limit
        case "images.png_compression": config.imageOutput.compressionLevel = try integer(value, in: 0...9)
        case "limits.max_record_bytes": config.records.maxFileBytes = try integer(value, in: 1024...(1 << 30))
        case "limits.min_free_bytes": config.minFreeBytes = try integer(value, in: 0...(1 << 40))
        case "sources.musicbrainz_url": config.sources.musicBrainzURL = try serviceURL(value)
        case "sources.coverartarchive_url": config.sources.coverArtArchiveURL = try serviceURL(value)
        case "sources.contact":
            let text = try string(value)
            // It goes into a header: a line break would end it and start another.
            guard text.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F }), text.utf8.count <= 256 else {
                throw ConfigValueError(message: "must be one line of at most 256 bytes without control characters")
            }
            config.fetch.contact = text
        case "sources.min_score": config.sources.minScore = try integer(value, in: 0...100)
        case "sources.recheck_interval": config.retry.lookupRecheck = try seconds(value, in: 60...(10 * 365 * 86_400))
        case "sources.lookup": config.records.coverURLRequired = !(try boolean(value))
        default:
            let hint = keys.first { $0.hasSuffix("." + key) || key.hasSuffix("." + $0) }
                ?? keys.min { editDistance($0, key) < editDistance($1, key) }.flatMap { editDistance($0, key) <= 2 ? $0 : nil }
            throw ConfigValueError(message: "unknown setting" + (hint.map { " (did you mean '\($0)'?)" } ?? ""))
        }
    }

    /// Levenshtein distance, for "did you mean" hints.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a.utf8), b = Array(b.utf8)
        var previous = Array(0...b.count)
        for (i, left) in a.enumerated() {
            var current = [i + 1] + [Int](repeating: 0, count: b.count)
            for (j, right) in b.enumerated() {
                current[j + 1] = min(previous[j + 1] + 1, current[j] + 1, previous[j] + (left == right ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }

    private static func string(_ value: ConfigValue) throws(ConfigValueError) -> String {
        guard case .string(let text) = value else { throw ConfigValueError(message: "must be a string, found \(describe(value))") }
        return text
    }

    private static func boolean(_ value: ConfigValue) throws(ConfigValueError) -> Bool {
        guard case .boolean(let flag) = value else { throw ConfigValueError(message: "must be true or false, found \(describe(value))") }
        return flag
    }

    /// A web service's base: an absolute http or https URL, kept without a trailing slash.
    private static func serviceURL(_ value: ConfigValue) throws(ConfigValueError) -> String {
        var text = try string(value)
        while text.hasSuffix("/") { text.removeLast() }
        guard (try? CoverURL(validating: text)) != nil else {
            throw ConfigValueError(message: "must be an absolute http or https URL, found \"\(text.prefix(80))\"")
        }
        // Paths are appended to it ("<url>/ws/2/…"): a query or fragment would swallow them.
        guard !text.contains("?"), !text.contains("#") else {
            throw ConfigValueError(message: "must be a base URL without a query or fragment, found \"\(text.prefix(80))\"")
        }
        return text
    }

    private static func integer(_ value: ConfigValue, in range: ClosedRange<Int>) throws(ConfigValueError) -> Int {
        guard case .integer(let number) = value else {
            throw ConfigValueError(message: "must be an integer, found \(describe(value))")
        }
        guard range.contains(number) else {
            throw ConfigValueError(message: "must be between \(range.lowerBound) and \(range.upperBound), found \(number)")
        }
        return number
    }

    /// A duration in seconds, integer or decimal.
    private static func seconds(_ value: ConfigValue, in range: ClosedRange<Double>) throws(ConfigValueError) -> Duration {
        let number: Double
        switch value {
        case .integer(let int): number = Double(int)
        case .real(let real): number = real
        default: throw ConfigValueError(message: "must be a number of seconds, found \(describe(value))")
        }
        guard range.contains(number) else {
            throw ConfigValueError(message: "must be between \(range.lowerBound) and \(range.upperBound) seconds, found \(number)")
        }
        return .milliseconds(Int64((number * 1000).rounded()))
    }

    private static func logLevel(_ value: ConfigValue) throws(ConfigValueError) -> Logger.Level {
        let text = try string(value)
        guard let level = Logger.Level(rawValue: text.lowercased()) else {
            let names = Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")
            throw ConfigValueError(message: "must be one of \(names) (found \"\(text)\")")
        }
        return level
    }

    private static func describe(_ value: ConfigValue) -> String {
        switch value {
        case .string(let text): return "the string \"\(text.prefix(40))\""
        case .integer(let number): return "the integer \(number)"
        case .real(let number): return "the number \(number)"
        case .boolean(let flag): return "the boolean \(flag)"
        case .other(let type): return "a value of type \(type)"
        }
    }
}
