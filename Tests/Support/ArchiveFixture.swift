import Foundation

/// Archives albums the way the BlueLibrary app does: NSKeyedArchiver, a root
/// array of `Album` objects with the keys album, artist, year, genre, cover_url.
public enum ArchiveFixture {
    public struct Entry: Sendable {
        public var title: String
        public var artist: String
        public var year: String
        public var genre: String
        /// Nil: the album has no `cover_url` key (its cover is looked up).
        public var coverURL: String?

        public init(title: String, artist: String, year: String = "2000", genre: String = "Pop", coverURL: String?) {
            self.title = title
            self.artist = artist
            self.year = year
            self.genre = genre
            self.coverURL = coverURL
        }
    }

    public static func archive(_ entries: [Entry]) throws -> Data {
        let archiver = NSKeyedArchiver(requiringSecureCoding: false)
        archiver.setClassName("Album", for: Album.self)
        archiver.encode(entries.map(Album.init) as NSArray, forKey: NSKeyedArchiveRootObjectKey)
        archiver.finishEncoding()
        return archiver.encodedData
    }
}

/// The app's model class. It must be top-level for Foundation on Linux, which
/// archives it as `CoverdTestSupport.Album` (coverd accepts a module prefix).
final class Album: NSObject, NSCoding {
    let entry: ArchiveFixture.Entry

    init(_ entry: ArchiveFixture.Entry) {
        self.entry = entry
    }

    func encode(with coder: NSCoder) {
        coder.encode(entry.title as NSString, forKey: "album")
        coder.encode(entry.artist as NSString, forKey: "artist")
        coder.encode(entry.year as NSString, forKey: "year")
        coder.encode(entry.genre as NSString, forKey: "genre")
        if let url = entry.coverURL { coder.encode(url as NSString, forKey: "cover_url") }
    }

    init?(coder: NSCoder) {
        return nil
    }
}
