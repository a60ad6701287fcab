import ArgumentParser
import CoverdCore

/// `coverd status`: what the index says, whether or not the daemon runs.
struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show every album and the state of its cover.")

    @OptionGroup var config: ConfigOptions
    @OptionGroup var cache: CacheOptions

    @Flag(name: .long, help: "Print JSON: {\"summary\": {...}, \"albums\": [...]}.")
    var json = false

    func run() throws {
        try exitingOnFailure {
            let directory = try cache.directory(config: config)
            let report: StatusReport
            do {
                report = try StatusReport.load(cacheDirectory: directory)
            } catch {
                printError("coverd: \(error)")
                throw ExitCode.failure
            }
            print(json ? report.json() : report.table(), terminator: "")
        }
    }
}
