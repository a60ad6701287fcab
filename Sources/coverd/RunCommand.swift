import ArgumentParser
import CoverdBase
import CoverdConfig
import CoverdDaemon
import CoverdLogging
import CoverdSystemd
import Foundation
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

    @Option(name: .customLong("log-level"), help: "The least severe level logged (default info).")
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

    /// The file's settings with this command's flags on top; read again on every reload.
    func resolve() throws(ConfigError) -> Configuration {
        var configuration = try ConfigLoader().load(file: config.config)
        if let records = records.records { configuration.recordsDirectory = absolute(records) }
        if let cache = cache.cache { configuration.cacheDirectory = absolute(cache) }
        if let concurrency { configuration.fetch.concurrency = concurrency }
        if let perHost { configuration.fetch.perHost = perHost }
        if let logLevel { configuration.logLevel = logLevel.level }
        if let logTarget { configuration.logTarget = logTarget }
        return configuration
    }

    func run() throws {
        let notifier = SystemdNotifier()
        let environment = ProcessInfo.processInfo.environment
        let configuration: Configuration
        do {
            configuration = try resolve()
        } catch {
            // No configuration, so no log target: the journal if stderr is connected to it.
            if standardErrorIsJournal(environment: environment) {
                let logger = Logger(label: "coverd") { _ in JournalLogHandler(level: LogLevelSetting(.info)) }
                logger.critical("configuration error: \(error)", metadata: ["error": "\(error)"])
            } else {
                printError(ConfigurationFailure(error: error).description)
            }
            notifier.notify([("STATUS", "configuration error: \(error)"), ("ERRNO", "\(EINVAL)")])
            throw ExitCode(78)
        }
        let level = LogLevelSetting(configuration.logLevel)
        var target = configuration.logTarget.resolved(environment: environment)
        // Asked for the journal where there is none: every line would vanish without an error.
        let noJournal = target == .journal && !JournalLogHandler.isAvailable
        if noJournal { target = .stderr }
        LoggingSystem.bootstrap { [target] _ -> any LogHandler in
            target == .journal ? JournalLogHandler(level: level) : StderrLogHandler(level: level)
        }
        if noJournal {
            Logger(label: "coverd").warning(
                "log target is the journal, but \(JournalLogHandler.socketPath) does not exist: logging to stderr instead")
        }
        let bus = EventBus()
        let logger = EventLogger(bus: bus, logger: Logger(label: "coverd"))
        let reporter = SystemdReporter(notifier: notifier, bus: bus)
        reporter.start()
        let command = self
        let daemon = Daemon(configuration: configuration, bus: bus, notifier: notifier, logLevel: level) { () throws(ConfigError) -> Configuration in
            try command.resolve()
        }
        do {
            try daemon.run()
            logger.flush()
            reporter.flush()
        } catch {
            logger.flush()
            reporter.flush()
            Logger(label: "coverd").critical("\(error.message)", metadata: ["error": "\(error.message)"])
            notifier.notify([("STATUS", "failed to start: \(error.message)"), ("ERRNO", "\(error.errno ?? EIO)")])
            throw error.isAboutConfiguration ? ExitCode(78) : ExitCode.failure
        }
    }
}
