import ArgumentParser
import CoverdBase
import CoverdStatus
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `coverd status`: what the index says, whether or not the daemon runs.
struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show every album and the state of its cover.")

    @OptionGroup var config: ConfigOptions
    @OptionGroup var cache: CacheOptions

    @Flag(name: .long, help: "Print JSON: {\"summary\": {...}, \"albums\": [...]}.")
    var json = false

    @Flag(name: .long, help: "Show the albums removed from the records whose covers are kept, and until when, instead.")
    var removed = false

    func run() throws {
        try exitingOnFailure {
            let directory = try cache.directory(config: config)
            var report: StatusReport
            do {
                report = try StatusReport.load(cacheDirectory: directory)
            } catch {
                printError("coverd: \(error)")
                throw ExitCode.failure
            }
            report.maxAge = try config.load().freshnessMaxAge
            if let missing = report.missingIndex {
                // Still zero albums on stdout (a script before the first run keeps working),
                // but a person who mistyped --cache is told why it is empty.
                printError("coverd: no index at \(missing) (the daemon has not run with this cache yet)")
            }
            if removed {
                let keepFor = try config.load().keepRemoved
                if json {
                    try writeStandardOutput(StatusText(report).removedJSON(keepFor: keepFor))
                } else {
                    print(StatusText(report).removedTable(keepFor: keepFor), terminator: "")
                }
                return
            }
            if json {
                // Tens of megabytes for a large library: written as built, without a String in between.
                try writeStandardOutput(StatusText(report).jsonBytes())
            } else {
                print(StatusText(report).table(), terminator: "")
            }
        }
    }
}

/// Writes `bytes` to standard output whole, or fails naming the error.
private func writeStandardOutput(_ bytes: [UInt8]) throws {
    // Piped into jq or a script: a large output then crosses in far fewer wake-ups. One that fits the default 64 KiB buffer would gain nothing.
    if bytes.count > 64 * 1024 { enlargePipeBuffer(STDOUT_FILENO) }
    guard let failure = bytes.withUnsafeBytes({ writeAll($0, to: STDOUT_FILENO) }) else { return }
    printError("coverd: cannot write to standard output: \(String(cString: strerror(failure))) (errno \(failure))")
    throw ExitCode.failure
}
