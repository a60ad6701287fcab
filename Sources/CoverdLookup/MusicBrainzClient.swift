import CoverdFetch
import CoverdModel

/// MusicBrainz's web service (`/ws/2`, JSON), every request paced by the
/// process-wide `RatePacer`. A 503 or 429 from it pauses the pacer, so no
/// other album's request follows too soon, and is a transient failure.
struct MusicBrainzClient: Sendable {
    let fetcher: AwaitedFetcher
    let pacer: RatePacer
    /// No documented answer comes near this; a hostile one stops here.
    static let answerLimit = 4 << 20
    /// The longest request URL sent, as for a cover's (`CoverURL`).
    static let longestURL = 4096
    /// Results asked of a search: the best few are all a match can be among.
    static let searchLimit = 10

    /// The release group of `release`; nil when MusicBrainz knows no such release.
    func releaseGroup(ofRelease release: MusicBrainzID, base: String) async -> Result<MusicBrainzID?, FetchFailure> {
        let answer = await get("\(base)/ws/2/release/\(release)?inc=release-groups&fmt=json", what: "release \(release)")
        switch answer {
        case .failure(let failure) where failure.httpStatus == 404:
            return .success(nil)
        case .failure(let failure):
            return .failure(failure)
        case .success(let bytes):
            do throws(MusicBrainzAnswer.Malformed) {
                return .success(try MusicBrainzAnswer.releaseGroup(ofRelease: bytes))
            } catch {
                return .failure(malformed(error, "release \(release)"))
            }
        }
    }

    /// Release groups by `artist` titled `title`, as the search ranks them.
    func searchReleaseGroups(artist: String, title: String, base: String) async -> Result<MusicBrainzAnswer.Search, FetchFailure> {
        let query = LuceneQuery.percentEncoded(LuceneQuery.releaseGroup(artist: artist, title: title))
        let what = "a search for \(artist.prefix(80)) – \(title.prefix(80))"
        let address = "\(base)/ws/2/release-group/?query=\(query)&fmt=json&limit=\(Self.searchLimit)"
        guard address.utf8.count <= Self.longestURL else {
            let message = "MusicBrainz: the artist and title are too long to search for (\(address.utf8.count) bytes in the URL, at most \(Self.longestURL))"
            return .failure(FetchFailure(kind: .other, message: message))
        }
        switch await get(address, what: what) {
        case .failure(let failure):
            return .failure(failure)
        case .success(let bytes):
            do throws(MusicBrainzAnswer.Malformed) {
                return .success(try MusicBrainzAnswer.releaseGroupSearch(bytes))
            } catch {
                return .failure(malformed(error, what))
            }
        }
    }

    private func get(_ address: String, what: String) async -> Result<[UInt8], FetchFailure> {
        guard let url = try? CoverURL(validating: address, maxLength: Self.longestURL) else {
            return .failure(FetchFailure(kind: .other, message: "MusicBrainz: \(address) is not a valid http or https URL"))
        }
        do {
            try await pacer.turn()
        } catch is CancellationError {
            return .failure(FetchFailure(kind: .cancelled, message: "cancelled"))
        } catch {
            return .failure(FetchFailure(kind: .other, message: "MusicBrainz, \(what): waiting for a turn failed: \(error)"))
        }
        switch await fetcher.answer(url, limit: Self.answerLimit) {
        case .success(let body):
            await pacer.finished(.answered, requestSent: body.requestSent)
            return .success(body.bytes)
        case .failure(var failure):
            if failure.httpStatus == 503 || failure.httpStatus == 429 {
                // Its rule is about the whole client: every waiting request backs off, not only this one.
                await pacer.finished(.refused(retryAfter: failure.retryAfter), requestSent: failure.requestSent)
            } else {
                await pacer.finished(failure.httpStatus == nil ? .unanswered : .answered, requestSent: failure.requestSent)
            }
            failure.message = "MusicBrainz, \(what): \(failure.message)"
            return .failure(failure)
        }
    }

    private func malformed(_ error: MusicBrainzAnswer.Malformed, _ what: String) -> FetchFailure {
        FetchFailure(kind: .other, message: "MusicBrainz, \(what): \(error.reason)")
    }
}
