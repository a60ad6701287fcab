import ArgumentParser
import CoverdControl
import CoverdModel
import CoverdSync
import Foundation

/// `coverd refresh`: covers revalidated now (or erased and fetched anew), by
/// the running daemon, or marked for its next start when none runs.
struct RefreshCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "refresh",
        abstract: "Revalidate covers now (--erase: delete them and fetch them anew).",
        discussion: """
            A cover is revalidated by itself once it is freshness.max_age seconds old (coverd.toml's [freshness]; \
            30 days by default, 0 never): asked again with its ETag and Last-Modified, a 304 leaving the file as it is. \
            refresh asks now. A running daemon acts at once, told through its control socket; with no daemon running, the covers are \
            marked in the index and the daemon acts at its next start. An unknown id exits 1 naming it, and nothing \
            is changed. Exits 1 too when a daemon holds the cache but its socket cannot be reached.
            """)

    @Argument(help: "Album ids, as coverd status shows them.") var ids: [String] = []
    @Flag(help: "Every album's cover.") var all = false
    @Flag(help: "Delete the covers and fetch them anew, without their validators (ETag, Last-Modified).") var erase = false
    @OptionGroup var cache: CacheOptions
    @OptionGroup var config: ConfigOptions

    func validate() throws {
        guard all || !ids.isEmpty else { throw ValidationError("name the albums to refresh, or --all") }
        for id in ids where !AlbumID.isValid(id) {
            throw ValidationError("'\(id)' is not an album id")
        }
    }

    func run() throws {
        try exitingOnFailure {
            let albums = try ids.map { text throws(AlbumFieldError) in try AlbumID(validating: text) }
            let request = RefreshRequest(ids: albums, all: all, mark: erase ? .erase : .revalidate)
            let refresh = CacheRefresh(cacheDirectory: try cache.directory(config: config), environment: ProcessInfo.processInfo.environment)
            let outcome: CacheRefresh.Outcome
            do {
                outcome = try refresh.run(request)
            } catch {
                printError("coverd: cannot refresh: \(error)")
                throw ExitCode.failure
            }
            let how = erase ? "erased and fetched anew" : "revalidated"
            switch outcome {
            case .refreshing(let count):
                print("refreshing \(count) cover(s) (\(how))")
            case .marked(let count):
                print("marked \(count) cover(s) to be \(how): no daemon is running, the next one does it when it starts")
            case .unknown(let unknown):
                printError("coverd: unknown album id(s): \(unknown.map(\.rawValue).joined(separator: ", ")); nothing was changed")
                throw ExitCode.failure
            }
        }
    }
}
