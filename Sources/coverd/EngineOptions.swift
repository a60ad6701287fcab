import ArgumentParser
import CoverdConfig

/// The options of the commands that run the engine, `run` and `sync`, beside
/// the groups that say where things are: how many transfers, and the log.
struct EngineOptions: ParsableArguments {
    @Option(name: .long, help: "Transfers at once (default 16).")
    var concurrency: Int?

    @Option(name: .customLong("per-host"), help: "Transfers at once to one host (default 6).")
    var perHost: Int?

    @Option(name: .customLong("log-level"), help: "The least severe level logged (default: info for run, warning for sync).")
    var logLevel: LogLevelArgument?

    @Option(name: .customLong("log-target"), help: "Where log lines go; auto: the journal under systemd, else stderr (default auto).")
    var logTarget: LogTarget?

    func validate() throws {
        // The same ranges as the settings these flags override.
        for (flag, value) in [("--concurrency", concurrency), ("--per-host", perHost)] {
            if let value, !ConfigSchema.transfers.contains(value) {
                throw ValidationError("\(flag) must be between \(ConfigSchema.transfers.lowerBound) and \(ConfigSchema.transfers.upperBound)")
            }
        }
    }

    /// The file's settings with these flags and the path flags on top; `run` reads them again on every reload.
    func resolve(config: ConfigOptions, records: RecordsOptions, cache: CacheOptions) throws(ConfigError) -> Configuration {
        var configuration = try ConfigLoader().load(file: config.config)
        if let records = records.records { configuration.recordsDirectory = absolute(records) }
        if let cache = cache.cache { configuration.cacheDirectory = absolute(cache) }
        if let concurrency { configuration.fetch.concurrency = concurrency }
        if let perHost { configuration.fetch.perHost = perHost }
        if let logLevel { configuration.logLevel = logLevel.level }
        if let logTarget { configuration.logTarget = logTarget }
        return configuration
    }
}
