import CoverdLookup
import CoverdModel

/// What a job gets a cover from: a URL (the record's), or a lookup, which
/// finds the URL and downloads the cover in one go. Albums with the same
/// key share one job, and so one download or one lookup.
enum JobKey: Hashable, Comparable, CustomStringConvertible {
    case url(CoverURL)
    /// Out of line: a key is as small as a URL, in every table keyed by jobs.
    indirect case lookup(LookupRequest)

    /// An album's key: its record's URL, else its lookup.
    init(_ album: Album) {
        if let url = album.coverURL {
            self = .url(url)
        } else {
            self = .lookup(LookupRequest(album))
        }
    }

    var url: CoverURL? {
        if case .url(let url) = self { return url }
        return nil
    }

    var description: String {
        switch self {
        case .url(let url): return url.string
        case .lookup(let request):
            let ids = [request.releaseID.map { "release \($0)" }, request.releaseGroupID.map { "release group \($0)" }].compactMap { $0 }
            return "a lookup of \(request.artist) – \(request.title)" + (ids.isEmpty ? "" : " (\(ids.joined(separator: ", ")))")
        }
    }

    /// URLs first, then lookups; each by its text (for a stable order in tests and logs).
    static func < (lhs: JobKey, rhs: JobKey) -> Bool {
        switch (lhs, rhs) {
        case (.url(let left), .url(let right)): return left < right
        case (.url, .lookup): return true
        case (.lookup, .url): return false
        case (.lookup(let left), .lookup(let right)): return left.sortKey.lexicographicallyPrecedes(right.sortKey)
        }
    }
}

extension LookupRequest {
    fileprivate var sortKey: [String] {
        [releaseID?.rawValue ?? "", releaseGroupID?.rawValue ?? "", artist, title]
    }
}
