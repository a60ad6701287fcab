import CoverdBase
import CoverdModel

/// Writes one album as a record file, atomically (`writeFileDurably`: a
/// hidden temporary file, which the watcher ignores, flushed and renamed to
/// `<id>.json`), so the watcher only ever sees the complete record.
public struct RecordWriter: Sendable {
    public let directory: String

    public init(directory: String) {
        self.directory = directory
    }

    /// Where `write` puts `album`'s record: `<directory>/<id>.json`.
    public func path(for album: Album) -> String {
        join(directory, album.id.rawValue + ".json")
    }

    /// Returns the path written.
    public func write(_ album: Album, includeID: Bool) throws(SystemError) -> String {
        try makeDirectories(directory)
        var fields = ["\"title\": \(JSONText.quote(album.title))", "\"artist\": \(JSONText.quote(album.artist))"]
        if let url = album.coverURL { fields.append("\"cover_url\": \(JSONText.quote(url.string))") }
        if let release = album.releaseID { fields.append("\"mbid\": \(JSONText.quote(release.rawValue))") }
        if let group = album.releaseGroupID { fields.append("\"release_group_mbid\": \(JSONText.quote(group.rawValue))") }
        if let year = album.year { fields.append("\"year\": \(JSONText.quote(year))") }
        if let genre = album.genre { fields.append("\"genre\": \(JSONText.quote(genre))") }
        if includeID { fields.append("\"id\": \(JSONText.quote(album.id.rawValue))") }
        let text = "{\n  " + fields.joined(separator: ",\n  ") + "\n}\n"
        let target = path(for: album)
        do {
            try writeFileDurably(Array(text.utf8), to: target)
        } catch {
            throw error.error
        }
        return target
    }
}
