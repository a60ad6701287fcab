import ArgumentParser
import CoverdBase
import CoverdControl
import CoverdStatus
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `coverd status`: what the index says, whether or not the daemon runs;
/// `--follow`: the running daemon's progress, live, through its control socket.
struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show every album and the state of its cover.",
        discussion: """
            A cover is outdated once freshness.max_age (coverd.toml's [freshness], read from --config) has passed since \
            it was last downloaded or confirmed, or when coverd refresh asked; the table marks it cached*, --json gives \
            "outdated" and "checked_at" for each album and "outdated" in the summary. \
            --follow prints the running daemon's summary line at once, then a line each time it changes (at most one \
            a second while covers are pending), until interrupted (exit 0) or until the daemon stops (exit 1, \
            saying so). With no daemon running it exits 1 at once. With --json each line is \
            {"summary": {...}, "line": "..."}.
            """)

    @OptionGroup var config: ConfigOptions
    @OptionGroup var cache: CacheOptions

    @Flag(name: .long, help: "Print JSON: {\"summary\": {...}, \"albums\": [...]}.")
    var json = false

    @Flag(name: .long, help: "Show the albums removed from the records whose covers are kept, and until when, instead.")
    var removed = false

    @Flag(name: .long, help: "Follow the running daemon's progress, a line per change, until interrupted.")
    var follow = false

    func validate() throws {
        if follow && removed { throw ValidationError("--follow and --removed cannot be combined") }
    }

    func run() throws {
        try exitingOnFailure {
            let directory = try cache.directory(config: config)
            if follow { return try followDaemon(cache: directory) }
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

extension StatusCommand {
    /// Prints each progress line the daemon of `cache` sends, as it comes.
    private func followDaemon(cache: String) throws {
        let client: ControlClient
        do {
            let candidates = try ControlSocketPath.clientCandidates(cacheDirectory: cache, environment: ProcessInfo.processInfo.environment)
            client = try ControlClient.connect(to: candidates, cache: cache, timeout: .seconds(2))
            try client.send(.follow)
        } catch {
            switch error {
            case .noPath:
                printError("coverd: no coverd daemon is running with the cache \(cache) (\(error))")
            case .noDaemon(_, let tried):
                if let pid = CacheHolder.likelyPid(cacheDirectory: cache) {
                    printError(
                        "coverd: a coverd daemon (pid \(pid)) seems to run with the cache \(cache), but nothing listens at "
                            + "\(tried.joined(separator: " or ")): its log says why it has no control socket")
                } else {
                    printError("coverd: \(error)")
                }
            default:
                printError("coverd: \(error)")
            }
            throw ExitCode.failure
        }
        // Interrupted is how following ends: quietly, and successfully. Each line was written whole already.
        // Unblocked too: a parent may have started us with SIGINT blocked (Foundation's Process passes its mask on).
        signal(SIGINT) { _ in _exit(0) }
        var interrupt = sigset_t()
        sigemptyset(&interrupt)
        sigaddset(&interrupt, SIGINT)
        pthread_sigmask(SIG_UNBLOCK, &interrupt, nil)
        var timeout: Duration? = .seconds(5)  // For the first line, which comes at once; then as long as it takes.
        while true {
            let response: ControlResponse?
            do {
                response = try client.next(timeout: timeout)
            } catch {
                printError("coverd: \(error)")
                throw ExitCode.failure
            }
            timeout = nil
            switch response {
            case .progress(let update)?:
                // What the socket says is not trusted with the terminal: control bytes are shown, not obeyed.
                let text = (json ? update.json : update.line).unicodeScalars.map { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) ? "?" : String($0) }.joined()
                try writeStandardOutput(Array((text + "\n").utf8))
            case .error(let message)?:
                printError("coverd: the daemon at \(client.socketPath.path) refused: \(message)")
                throw ExitCode.failure
            case .stopping?:
                printError("coverd: the daemon stopped")
                throw ExitCode.failure
            case nil:
                printError("coverd: the daemon closed the connection")
                throw ExitCode.failure
            case .refreshed?, .unknown?:
                printError("coverd: the daemon at \(client.socketPath.path) sent an answer to another request")
                throw ExitCode.failure
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
