#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CoverdBase
import CoverdModel
import CoverdRecords

/// Finds the record file that holds an album, under a records directory, by
/// reading every record file there as the daemon would. For `coverd remove`
/// when the index does not know the album's file (or knows an old one).
struct RecordSearch {
    let directory: String
    let reader: RecordFileReader

    /// The first record file, in the order of their full paths, that holds album `id`, other than `skipping`.
    func file(holding id: AlbumID, skipping: String? = nil) -> String? {
        var unreadable: [String] = []
        return file(holding: id, skipping: skipping, unreadable: &unreadable)
    }

    /// `file(holding:)`, naming in `unreadable` the files that could not be
    /// read (each with why), one of which may hold the album.
    func file(holding id: AlbumID, skipping: String? = nil, unreadable: inout [String]) -> String? {
        for path in recordFiles().sorted() where path != skipping {
            guard let kind = RecordFileKind(fileName: splitPath(path).name) else { continue }
            do {
                if try reader.read(path, kind: kind).albums.contains(where: { $0.id == id }) { return path }
            } catch {
                unreadable.append("\(path): \(error)")
            }
        }
        return nil
    }

    /// Every record file under the directory, hidden files and folders left out as the watcher leaves them.
    private func recordFiles() -> [String] {
        var files: [String] = []
        var folders = [directory]
        while let folder = folders.popLast() {
            for entry in listDirectory(folder) ?? [] {
                guard let name = entry.name, !name.hasPrefix(".") else { continue }
                let path = join(folder, name)
                var type = entry.type
                if type == 0 /* DT_UNKNOWN: some file systems do not say */ {
                    var info = stat()
                    guard lstat(path, &info) == 0 else { continue }
                    type = info.st_mode & S_IFMT == S_IFDIR ? 4 : 8
                }
                if type == 4 /* DT_DIR */ {
                    folders.append(path)
                } else if RecordFileKind(fileName: name) != nil {
                    files.append(path)
                }
            }
        }
        return files
    }
}
