import CoverdModel

/// Finds covers for albums whose record gives no URL, in two parts: the
/// archive's, by the record's ids, which waits for nothing; then, if that
/// found nothing, MusicBrainz's, whose requests wait for its pacer.
public protocol CoverFinding: Sendable {
    func atArchive(_ request: LookupRequest) async -> LookupStep
    func withMusicBrainz(_ pending: PendingLookup) async -> LookupOutcome
}
