import CoverdBase
import CoverdModel
import CoverdRecords

/// Finds the record file that holds an album, under a records directory, by
/// reading every record file there as the daemon would. For `coverd remove`
/// when the index does not know the album's file (or knows an old one).
struct RecordSearch {
    let directory: String
    let reader: RecordFileReader

    /// The first record file, in name order, that holds album `id`.
    func file(holding id: AlbumID) -> String? {
        var folders = [directory]
        while let folder = folders.popLast() {
            guard let entries = listDirectory(folder) else { continue }
            for entry in entries.sorted(by: { $0.displayName < $1.displayName }) {
                guard let name = entry.name, !name.hasPrefix(".") else { continue }
                let path = join(folder, name)
                if entry.type == 4 /* DT_DIR */ {
                    folders.append(path)
                    continue
                }
                guard let kind = RecordFileKind(fileName: name) else { continue }
                // A file that cannot be read holds nothing removable; the daemon reports it.
                guard let contents = try? reader.read(path, kind: kind) else { continue }
                if contents.albums.contains(where: { $0.id == id }) { return path }
            }
        }
        return nil
    }
}
