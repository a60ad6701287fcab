import CoverdModel

/// The Cover Art Archive's front-image URLs (`/release/<id>/front-500`, …),
/// which answer 307 to the image on the archive's image host, or 404 when
/// there is no such image.
enum CoverArtArchive {
    /// What has front images in the archive.
    enum Entity: Sendable, Equatable, CustomStringConvertible {
        case release(MusicBrainzID)
        case releaseGroup(MusicBrainzID)

        var path: String {
            switch self {
            case .release(let id): return "release/\(id)"
            case .releaseGroup(let id): return "release-group/\(id)"
            }
        }

        var description: String {
            switch self {
            case .release(let id): return "release \(id)"
            case .releaseGroup(let id): return "release group \(id)"
            }
        }
    }

    /// The URLs to try for `entity`'s front image, in order: the thumbnail
    /// asked for, then the original (a 1200 thumbnail is missing where the
    /// original is smaller); nil when `base` does not make a valid URL.
    static func frontURLs(base: String, _ entity: Entity, thumbnail: Int?) -> [CoverURL]? {
        var names = ["front"]
        if let thumbnail { names.insert("front-\(thumbnail)", at: 0) }
        var urls: [CoverURL] = []
        for name in names {
            guard let url = try? CoverURL(validating: "\(base)/\(entity.path)/\(name)") else { return nil }
            urls.append(url)
        }
        return urls
    }
}
