import CoverdFetch
import CoverdModel
import Synchronization

/// The lookup stage (contract §7): finds and downloads the cover of an
/// album whose record has no `cover_url`. In order: the Cover Art Archive's
/// front image of the release (`mbid`); of its release group (given, or
/// learnt from MusicBrainz); of the release groups a MusicBrainz search by
/// artist and title finds, taken only where the artist credit and title
/// agree with the record's (`NameMatching`) at a score of at least
/// `min_score`: no match is better than another artist's cover.
///
/// Each front image is asked for as the thumbnail `images.max_dimension`
/// calls for, then as the original, since a thumbnail may be missing; a 404
/// means no image there. MusicBrainz requests wait for the process-wide
/// `RatePacer`; the archive and its image host are limited only as every
/// transfer is (`per_host`).
///
/// It runs in two parts (`CoverFinding`), so that a caller can keep the
/// archive's lookups, which have no rate limit, apart from those waiting for
/// MusicBrainz's pacer.
///
/// Threading: both parts may run for many albums at once, each in its own task.
public final class CoverLookup: CoverFinding {
    private let fetcher: AwaitedFetcher
    private let musicBrainz: MusicBrainzClient
    private let settings: Mutex<LookupSettings>

    public convenience init(fetcher: any CoverFetching, settings: LookupSettings) {
        self.init(fetcher: fetcher, settings: settings, pacer: RatePacer())
    }

    /// `pacer`: MusicBrainz's, which tests may give a shorter interval.
    init(fetcher: any CoverFetching, settings: LookupSettings, pacer: RatePacer) {
        self.fetcher = AwaitedFetcher(fetcher: fetcher)
        musicBrainz = MusicBrainzClient(fetcher: self.fetcher, pacer: pacer)
        self.settings = Mutex(settings)
    }

    /// New settings (a reload), for the lookups that start from now on.
    public func apply(_ settings: LookupSettings) {
        self.settings.withLock { $0 = settings }
    }

    /// Both parts, in order: what a lookup does when nothing runs it in parts.
    public func resolve(_ request: LookupRequest) async -> LookupOutcome {
        switch await atArchive(request) {
        case .ended(let outcome): return outcome
        case .needsMusicBrainz(let pending): return await withMusicBrainz(pending)
        }
    }

    /// The archive's part: the front image of the record's release, then of
    /// the release group the record gives. Asks MusicBrainz nothing, so it
    /// never waits for its pacer.
    public func atArchive(_ request: LookupRequest) async -> LookupStep {
        let settings = self.settings.withLock { $0 }
        var tried: [String] = []
        if let release = request.releaseID {
            switch await front(.release(release), settings) {
            case .found(let url, let body):
                return .ended(.found(Resolution(url: url, source: .release, releaseID: release, releaseGroupID: request.releaseGroupID), body))
            case .failed(let failure):
                return .ended(.failed(failure))
            case .missing:
                tried.append("the archive has no front image for release \(release)")
            }
        }
        if let group = request.releaseGroupID {
            switch await front(.releaseGroup(group), settings) {
            case .found(let url, let body):
                return .ended(.found(Resolution(url: url, source: .releaseGroup, releaseID: request.releaseID, releaseGroupID: group), body))
            case .failed(let failure):
                return .ended(.failed(failure))
            case .missing:
                tried.append("the archive has no front image for release group \(group)")
            }
        }
        return .needsMusicBrainz(PendingLookup(request: request, settings: settings, tried: tried))
    }

    /// MusicBrainz's part, each request waiting for its pacer: the release's
    /// group when the record gave none, and its front image; then a search.
    public func withMusicBrainz(_ pending: PendingLookup) async -> LookupOutcome {
        let request = pending.request, settings = pending.settings
        var tried = pending.tried
        var group = request.releaseGroupID
        if let release = request.releaseID, group == nil {
            switch await musicBrainz.releaseGroup(ofRelease: release, base: settings.musicBrainzURL) {
            case .success(let found?): group = found
            case .success(nil): tried.append("MusicBrainz knows no release \(release)")
            case .failure(let failure): return .failed(failure)
            }
            if let group {
                switch await front(.releaseGroup(group), settings) {
                case .found(let url, let body):
                    return .found(Resolution(url: url, source: .releaseGroup, releaseID: release, releaseGroupID: group), body)
                case .failed(let failure):
                    return .failed(failure)
                case .missing:
                    tried.append("the archive has no front image for release group \(group)")
                }
            }
        }
        let search: MusicBrainzAnswer.Search
        switch await musicBrainz.searchReleaseGroups(artist: request.artist, title: request.title, base: settings.musicBrainzURL) {
        case .success(let answer): search = answer
        case .failure(let failure): return .failed(failure)
        }
        let matches = Self.matches(in: search, for: request, minScore: settings.minScore)
        let untried = matches.filter { $0.id != group }
        let searched = "a MusicBrainz search for \(request.artist.prefix(80)) – \(request.title.prefix(80))"
        if matches.isEmpty {
            tried.append(
                "\(searched) found \(search.candidates.count) release group(s), "
                    + "none by that artist with that title at a score of \(settings.minScore) or more"
                    + (search.skipped.isEmpty ? "" : " (passed over: \(search.skipped.prefix(3).joined(separator: "; ")))"))
        } else if untried.isEmpty, let group {
            tried.append("\(searched) found only release group \(group) again")
        }
        for match in untried.prefix(3) {
            switch await front(.releaseGroup(match.id), settings) {
            case .found(let url, let body):
                return .found(Resolution(url: url, source: .search, releaseID: nil, releaseGroupID: match.id), body)
            case .failed(let failure):
                return .failed(failure)
            case .missing:
                tried.append("the archive has no front image for release group \(match.id), found by the search")
            }
        }
        return .notFound("no cover found: " + tried.joined(separator: "; "))
    }

    /// The search results that are the record's album, best score first (the search's order among equals).
    static func matches(in search: MusicBrainzAnswer.Search, for request: LookupRequest, minScore: Int) -> [MusicBrainzAnswer.Candidate] {
        search.candidates.enumerated()
            .filter { _, candidate in
                candidate.score >= minScore && NameMatching.same(candidate.artist, request.artist)
                    && NameMatching.same(candidate.title, request.title)
            }
            .sorted { ($1.element.score, $0.offset) < ($0.element.score, $1.offset) }
            .map(\.element)
    }

    private enum Front {
        case found(CoverURL, FetchedBody)
        case missing
        case failed(FetchFailure)
    }

    /// `entity`'s front image from the archive: the thumbnail, else the original.
    private func front(_ entity: CoverArtArchive.Entity, _ settings: LookupSettings) async -> Front {
        guard let urls = CoverArtArchive.frontURLs(base: settings.coverArtArchiveURL, entity, thumbnail: settings.thumbnail) else {
            return .failed(FetchFailure(kind: .other, message: "Cover Art Archive: \(settings.coverArtArchiveURL) does not make a valid URL"))
        }
        for url in urls {
            switch await fetcher.get(url) {
            case .success(let body):
                return .found(url, body)
            case .failure(let failure) where failure.httpStatus == 404:
                continue
            case .failure(var failure):
                failure.message = "Cover Art Archive, \(entity): \(failure.message)"
                return .failed(failure)
            }
        }
        return .missing
    }
}
