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
    @OptionGroup var engine: EngineOptions

    /// The configuration file with this command's flags on top.
    func resolve() throws(ConfigError) -> Configuration {
        try engine.resolve(config: config, records: records, cache: cache)
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
        startLogging(target: configuration.logTarget, level: level, environment: environment)
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
