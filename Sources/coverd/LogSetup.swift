import CoverdConfig
import CoverdDaemon
import CoverdLogging
import CoverdSystemd
import Logging

/// Sends swift-log's lines to `target` (`auto` made concrete), at `level`.
/// `statusLine`: a progress line on the terminal that stderr's lines go above.
func startLogging(target: LogTarget, level: LogLevelSetting, environment: [String: String], statusLine: TerminalStatusLine? = nil) {
    var target = target.resolved(environment: environment)
    // Asked for the journal where there is none: every line would vanish without an error.
    let noJournal = target == .journal && !JournalLogHandler.isAvailable
    if noJournal { target = .stderr }
    LoggingSystem.bootstrap { [target] _ -> any LogHandler in
        target == .journal ? JournalLogHandler(level: level) : StderrLogHandler(level: level, statusLine: statusLine)
    }
    if noJournal {
        Logger(label: "coverd").warning(
            "log target is the journal, but \(JournalLogHandler.socketPath) does not exist: logging to stderr instead")
    }
}
