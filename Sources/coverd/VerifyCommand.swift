import ArgumentParser
import CoverdConfig
import CoverdStatus
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `coverd verify`: every cached PNG checked in full.
struct VerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check every cached PNG; exit 1 and list the bad ones if any is invalid.",
        discussion: """
            Bad covers are marked failed in the index; a running daemon fetches them again on its next reload (SIGHUP). \
            Where the index cannot be written (a full disk, a read-only cache), they are listed and not marked.
            """)

    @OptionGroup var config: ConfigOptions
    @OptionGroup var cache: CacheOptions

    func run() throws {
        try exitingOnFailure {
            let directory = try cache.directory(config: config)
            if access(directory, F_OK) != 0 && errno == ENOENT {
                printError("coverd: no cache at \(directory) (the daemon has not run with it yet): nothing to verify")
            }
            let settings = cache.cache == nil ? try config.load() : Configuration.defaults(environment: [:])
            let report = CoverVerifier(limits: settings.images, maxBytes: settings.fetch.maxBytes).verify(cacheDirectory: directory)
            for problem in report.problems {
                print("bad: \(problem.path): \(problem.reason)")
            }
            if let failure = report.indexFailure {
                print(summary(report))
                printError("coverd: cannot read the index, so covers it lists that are missing were not looked for, and none was marked: \(failure)")
                throw ExitCode.failure
            }
            if report.problems.isEmpty {
                print("ok: \(report.checked) cover(s) valid")
                return
            }
            if let failure = report.markingFailure, report.markable > 0 {
                print("\(summary(report)); none marked for refetch")
                printError("coverd: could not mark the bad covers in the index, so a reload will not fetch them again: \(failure)")
            } else {
                print("\(summary(report)); \(report.marked) marked for refetch on the next reload")
            }
            throw ExitCode.failure
        }
    }

    /// Problems count missing covers too, which are not among the files checked.
    private func summary(_ report: VerifyReport) -> String {
        "\(report.problems.count) bad or missing cover(s), \(report.checked) file(s) checked"
    }
}
