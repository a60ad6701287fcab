import ArgumentParser
import CoverdUndo

/// `coverd undo`: puts back the most recent removal.
struct UndoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "undo",
        abstract: "Put back the album most recently removed with coverd remove; repeated, it goes further back.",
        discussion: """
            The record file is restored byte for byte, if it is still as the removal left it (or still absent); \
            otherwise nothing is written and undo exits 1 naming the file. The last 50 removals are remembered \
            (at least 20 when the record files are large). --skip sets the most recent removal aside without \
            restoring it, when its file has changed since or its journal entry is damaged, so undo can go further back.
            """)

    @Flag(help: "Set the most recent removal aside without restoring it, so the next undo goes further back.")
    var skip = false

    /// Accepted as every record command accepts it; the journal names each file it restores.
    @OptionGroup var records: RecordsOptions
    @OptionGroup var cache: CacheOptions
    @OptionGroup var config: ConfigOptions

    func run() throws {
        try exitingOnFailure {
            do {
                let undoer = Undoer(cacheDirectory: try cache.directory(config: config))
                if skip {
                    guard let aside = try undoer.skipNewest() else { throw UndoError.nothingToUndo(journal: UndoJournal(cacheDirectory: undoer.cacheDirectory).directory) }
                    print("set aside \(aside); the next undo goes further back")
                    return
                }
                switch try undoer.undo() {
                case .restored(let entry):
                    print("restored \(entry.record) as it was before album \(entry.album) was removed")
                case .hadNotHappened(let entry):
                    print("\(entry.record) is already as it was before album \(entry.album) was removed (an interrupted remove or undo): nothing to write")
                }
            } catch {
                printError("coverd: cannot undo: \(error)")
                throw ExitCode.failure
            }
        }
    }
}
