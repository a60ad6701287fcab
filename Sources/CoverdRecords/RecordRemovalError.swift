import CoverdModel

/// Why an album could not be taken out of its record file.
public enum RecordRemovalError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A binary archive (the app's `albums.bin`): coverd reads it but never writes it.
    case archive(path: String)
    case notInFile(id: AlbumID, path: String)
    case unreadable(RecordFileError)
    /// The file's list could not be followed byte by byte (it is not one coverd's decoder reads as a list).
    case unfollowable(path: String)

    public var description: String {
        switch self {
        case .archive(let path):
            return "\(path) is a binary archive, which coverd reads but does not rewrite; remove the album in the app that wrote it"
        case .notInFile(let id, let path): return "\(path) holds no album \(id)"
        case .unreadable(let error): return "cannot read the record: \(error)"
        case .unfollowable(let path): return "cannot find the album's entry in \(path) byte by byte; the file is left as it was"
        }
    }
}
