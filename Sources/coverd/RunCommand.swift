import ArgumentParser
import CoverdCore
import Logging

/// `coverd run`: the daemon, in the foreground.
struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run the daemon in the foreground until SIGTERM or SIGINT (SIGHUP reloads).")

    @OptionGroup var config: ConfigOptions
    @OptionGroup var records: RecordsOptions
    @OptionGroup var cache: CacheOptions

    @Option(name: .long, help: "Transfers at once (default 16).")
    var concurrency: Int?

    @Option(name: .customLong("per-host"), help: "Transfers at once to one host (default 6).")
    var perHost: Int?

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical (default info).")
    var logLevel: String?

    func validate() throws {
        if let concurrency, !(1...1024).contains(concurrency) {
            throw ValidationError("--concurrency must be between 1 and 1024")
        }
        if let perHost, !(1...1024).contains(perHost) {
            throw ValidationError("--per-host must be between 1 and 1024")
        }
        if let logLevel, Logger.Level(rawValue: logLevel.lowercased()) == nil {
            throw ValidationError("--log-level must be one of \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", "))")
        }
    }

    /// The file's settings with this command's flags on top; read again on every reload.
    func resolve() throws(ConfigError) -> Configuration {
        var configuration = try ConfigLoader().load(file: config.config)
        if let records = records.records { configuration.recordsDirectory = absolute(records) }
        if let cache = cache.cache { configuration.cacheDirectory = absolute(cache) }
        if let concurrency { configuration.fetch.concurrency = concurrency }
        if let perHost { configuration.fetch.perHost = perHost }
        if let logLevel, let level = Logger.Level(rawValue: logLevel.lowercased()) { configuration.logLevel = level }
        return configuration
    }

    func run() throws {
        let configuration: Configuration
        do {
            configuration = try resolve()
        } catch {
            printError(ConfigurationFailure(error: error).description)
            throw ExitCode(78)
        }
        let level = LogLevelSetting(configuration.logLevel)
        LoggingSystem.bootstrap { _ in StderrLogHandler(level: level) }
        let bus = EventBus()
        let logger = EventLogger(bus: bus, logger: Logger(label: "coverd"))
        let command = self
        let daemon = Daemon(configuration: configuration, bus: bus, logLevel: level) { () throws(ConfigError) -> Configuration in
            try command.resolve()
        }
        do {
            try daemon.run()
            logger.flush()
        } catch {
            Logger(label: "coverd").critical("\(error.message)", metadata: ["error": "\(error.message)"])
            logger.flush()
            throw ExitCode.failure
        }
    }
}
