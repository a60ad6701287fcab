import CoverdBase
import CoverdModel

/// Where covers are: `<covers directory>/<album id>.png`.
public struct CoverPaths: Sendable, Equatable {
    /// The `covers/` directory.
    public let directory: String

    public init(directory: String) {
        self.directory = directory
    }

    public func path(for id: AlbumID) -> String {
        join(directory, id.rawValue + ".png")
    }
}
