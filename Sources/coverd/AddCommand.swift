import ArgumentParser
import CoverdModel
import CoverdRecords
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `coverd add`: writes one album record, atomically, and prints its id.
struct AddCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Write an album record into the records directory and print the album id.")

    @Option(name: .long, help: "The album title.") var title: String
    @Option(name: .long, help: "The artist.") var artist: String
    @Option(name: .customLong("cover-url"), help: "An absolute http or https URL of the cover.") var coverURL: String
    @Option(name: .long, help: "The release year.") var year: String?
    @Option(name: .long, help: "The genre.") var genre: String?
    @Option(name: .long, help: "An explicit album id (default: derived from artist and title).") var id: String?
    @OptionGroup var records: RecordsOptions
    @OptionGroup var config: ConfigOptions

    func validate() throws {
        _ = try album(record: "")
    }

    private func album(record: String) throws -> Album {
        var fields: [String: RecordFieldValue] = [
            "title": .string(title), "artist": .string(artist), "cover_url": .string(coverURL),
        ]
        if let year { fields["year"] = .string(year) }
        if let genre { fields["genre"] = .string(genre) }
        if let id { fields["id"] = .string(id) }
        do {
            return try AlbumValidator().album(from: fields, record: record, position: .unspecified)
        } catch {
            throw ValidationError(error.description)
        }
    }

    func run() throws {
        try exitingOnFailure {
            let directory = try records.records.map(absolute) ?? config.load().recordsDirectory
            let album = try album(record: "")
            do {
                let writer = RecordWriter(directory: directory)
                // Same id, same file: a second add updates the album, and says so rather than replacing it unannounced.
                let replacing = access(writer.path(for: album), F_OK) == 0
                let path = try writer.write(album, includeID: id != nil)
                print(album.id.rawValue)
                printError(replacing ? "replaced \(path) (a record of this album was already there)" : "wrote \(path)")
            } catch {
                printError("coverd: cannot write the record: \(error)")
                throw ExitCode.failure
            }
        }
    }
}
