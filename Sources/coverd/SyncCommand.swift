import ArgumentParser
import CoverdBase
import CoverdConfig
import CoverdDaemon
import CoverdLogging
import Foundation
import Logging

/// `coverd sync`: the daemon's engine in the foreground until no album is
/// pending, for a first import or a cron job; exit 0 when every album is cached.
struct SyncCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Fetch every missing cover in the foreground, then exit: 0 when every album is cached, 1 listing those that are not.",
        discussion: """
            The same engine as run, with the same options, until no album is pending: a progress bar on a terminal, \
            a plain line at most once a second otherwise, then each album not cached (id, artist – title, reason) and \
            a summary line, all on standard output; log lines (warnings and worse unless --log-level) on standard error. \
            An album still failing transiently (a connection error, a timeout, a 5xx) after --give-up-after seconds, or \
            whose next try comes later than that, is given up: listed, left pending for the daemon or the next sync. \
            Albums that failed in an earlier run are tried again when due, as the daemon would. Covers outdated when it \
            starts (freshness.max_age) are revalidated before it ends, each once, for at most --give-up-after seconds \
            once nothing else is pending; a failed revalidation keeps the cover and does not change the exit status. \
            Refused (exit 1) while a \
            daemon or another sync holds the cache. SIGINT, SIGTERM or SIGHUP stop it cleanly: exit 130, 143 or 129.
            """)

    @OptionGroup var config: ConfigOptions
    @OptionGroup var records: RecordsOptions
    @OptionGroup var cache: CacheOptions
    @OptionGroup var engine: EngineOptions

    @Option(name: .customLong("give-up-after"), help: ArgumentHelp(
        "Seconds to keep retrying a cover that fails transiently before counting it as failed (default 60).", valueName: "seconds"))
    var giveUpAfter: Double?

    func validate() throws {
        if let giveUpAfter, !(giveUpAfter.isFinite && giveUpAfter >= 0 && giveUpAfter <= 604_800) {
            throw ValidationError("--give-up-after must be between 0 and 604800 seconds")
        }
    }

    /// The configuration file with this command's flags on top.
    func resolve() throws(ConfigError) -> Configuration {
        try engine.resolve(config: config, records: records, cache: cache)
    }

    func run() throws {
        let environment = ProcessInfo.processInfo.environment
        var configuration: Configuration
        do {
            configuration = try resolve()
        } catch {
            printError(ConfigurationFailure(error: error).description)
            throw ExitCode(78)
        }
        // The configuration's log_level is the daemon's: a sync's progress stays readable unless asked.
        configuration.logLevel = engine.logLevel?.level ?? .warning
        // A terminal that does not tell its width (a pty nobody sized) is taken as the classic 80 columns.
        let columns = isatty(STDOUT_FILENO) == 1 ? terminalColumns(STDOUT_FILENO) ?? 80 : nil
        let statusLine = columns != nil ? TerminalStatusLine(output: STDOUT_FILENO) : nil
        // Log lines go above the bar only when they share its terminal.
        startLogging(
            target: configuration.logTarget, level: LogLevelSetting(configuration.logLevel), environment: environment,
            statusLine: isatty(STDERR_FILENO) == 1 ? statusLine : nil)
        let display = SyncProgressDisplay(style: columns.map { .terminal(columns: $0) } ?? .lines, statusLine: statusLine)
        let bus = EventBus()
        let logger = EventLogger(bus: bus, logger: Logger(label: "coverd"))
        let sync = OneShotSync(configuration: configuration, bus: bus, giveUpAfter: giveUpAfter ?? 60) { display.show($0) }
        let outcome: SyncOutcome
        do {
            outcome = try sync.run()
        } catch {
            logger.flush()
            if error.cacheInUse {
                printError("coverd: cannot sync: \(error.message); it keeps the covers in sync already (coverd status shows how far it is): wait for it, or stop it first")
                throw ExitCode.failure
            }
            printError("coverd: cannot sync: \(error.message)")
            throw error.isAboutConfiguration ? ExitCode(78) : ExitCode.failure
        }
        logger.flush()
        display.finish(outcome)
        if outcome.exitStatus != 0 { throw ExitCode(outcome.exitStatus) }
    }
}
