import ArgumentParser
import CoverdModel
import CoverdRecords
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `coverd add`: writes one album record, atomically, and prints its id. An
/// album without `--cover-url` is looked up by its ids, or by artist and title.
struct AddCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Write an album record into the records directory and print the album id.")

    @Option(name: .long, help: "The album title.") var title: String
    @Option(name: .long, help: "The artist.") var artist: String
    @Option(name: .customLong("cover-url"), help: "An absolute http or https URL of the cover (without one, the cover is looked up).")
    var coverURL: String?
    @Option(name: .long, help: "The MusicBrainz release id, to look the cover up by.") var mbid: String?
    @Option(name: .customLong("release-group-mbid"), help: "The MusicBrainz release-group id, to look the cover up by.")
    var releaseGroupMBID: String?
    @Option(name: .long, help: "The release year.") var year: String?
    @Option(name: .long, help: "The genre.") var genre: String?
    @Option(name: .long, help: "An explicit album id (default: derived from artist and title).") var id: String?
    @OptionGroup var records: RecordsOptions
    @OptionGroup var config: ConfigOptions

    func validate() throws {
        _ = try album(record: "")
    }

    private func album(record: String) throws -> Album {
        var fields: [String: RecordFieldValue] = ["title": .string(title), "artist": .string(artist)]
        if let coverURL { fields["cover_url"] = .string(coverURL) }
        if let mbid { fields["mbid"] = .string(mbid) }
        if let releaseGroupMBID { fields["release_group_mbid"] = .string(releaseGroupMBID) }
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
            // Without a URL the album is looked up: the daemon would reject it with lookups off.
            if coverURL == nil {
                let configuration = try config.load()
                if configuration.records.coverURLRequired {
                    let file = configuration.file.map { " in \($0)" } ?? ""
                    printError("coverd: lookups are off (sources.lookup = false\(file)): give the cover's URL with --cover-url")
                    throw ExitCode(64)
                }
            }
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
