import CoverdModel

/// Finds covers for albums whose record gives no URL, in two parts: the
/// archive's, by the record's ids, which waits for nothing; then, if that
/// found nothing, MusicBrainz's, whose requests wait for its pacer.
public protocol CoverFinding: Sendable {
    func atArchive(_ request: LookupRequest) async -> LookupStep
    func withMusicBrainz(_ pending: PendingLookup) async -> LookupOutcome
}

/// Where a lookup's archive part left it.
public enum LookupStep: Sendable {
    /// Found, failed, or nothing left to ask.
    case ended(LookupOutcome)
    /// The archive had nothing for the record's ids: MusicBrainz is next.
    case needsMusicBrainz(PendingLookup)
}

/// A lookup part-way, between its archive part and MusicBrainz's.
public struct PendingLookup: Sendable {
    public let request: LookupRequest
    /// The settings the lookup started with: a reload meanwhile does not change one half-done.
    let settings: LookupSettings
    /// What the archive part asked for and did not find, for the "no cover found" message.
    let tried: [String]

    package init(request: LookupRequest, settings: LookupSettings, tried: [String]) {
        self.request = request
        self.settings = settings
        self.tried = tried
    }
}
