import ArgumentParser
import CoverdModel
import CoverdUndo

/// `coverd remove ID`: takes the album out of its record file, undoably.
struct RemoveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove",
        abstract: "Take an album out of its record file; coverd undo puts it back.",
        discussion: """
            A file that held only that album is deleted; a list loses that entry and keeps every other byte. \
            The file's bytes go into an undo journal in the cache directory first. Albums in a binary archive \
            (albums.bin) cannot be removed this way. A running daemon sees the change like any edit, and keeps the \
            album's cover aside for cache.keep_removed seconds in case it comes back.
            """)

    @Argument(help: "The album id, as coverd status shows it.") var id: String
    @OptionGroup var records: RecordsOptions
    @OptionGroup var cache: CacheOptions
    @OptionGroup var config: ConfigOptions

    func validate() throws {
        do {
            _ = try AlbumID(validating: id)
        } catch {
            throw ValidationError("'\(id)' is not an album id: \(error)")
        }
    }

    func run() throws {
        try exitingOnFailure {
            let settings = try config.load()
            let remover = AlbumRemover(
                recordsDirectory: records.records.map(absolute) ?? settings.recordsDirectory,
                cacheDirectory: try cache.directory(config: config), limits: settings.records)
            do {
                let removal = try remover.remove(try AlbumID(validating: id))
                print(removal.deletedFile ? "removed \(id): deleted \(removal.record), which held only it" : "removed \(id) from \(removal.record)")
                for warning in removal.warnings { printError("coverd: warning: \(warning)") }
            } catch {
                printError("coverd: cannot remove \(id): \(error)")
                throw ExitCode.failure
            }
        }
    }
}
