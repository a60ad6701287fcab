import ArgumentParser
import CoverdBase
import CoverdFetch

/// `coverd`: the root command; each subcommand is its own type.
@main
struct Coverd: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "coverd",
        abstract: "Keep a PNG cover for every album record, fetched in the background.",
        discussion: """
            coverd watches a directory of album records (*.json, and the BlueLibrary app's albums.bin), \
            downloads each album's cover concurrently, and caches it as <cache>/covers/<id>.png.
            """,
        version: "coverd \(CoverdVersion.string) (\(CurlFetcher.libcurlVersion))",
        subcommands: [
            RunCommand.self, SyncCommand.self, StatusCommand.self, RefreshCommand.self, AddCommand.self, RemoveCommand.self, UndoCommand.self,
            VerifyCommand.self, CheckConfigCommand.self,
        ]
    )

    /// Bare `coverd` is bad usage (64), not a request for help: a script that
    /// forgot its subcommand must not read success.
    func run() throws {
        throw ValidationError("missing subcommand: one of run, sync, status, refresh, add, remove, undo, verify, check-config")
    }
}
