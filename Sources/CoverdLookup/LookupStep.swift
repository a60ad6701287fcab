/// Where a lookup's archive part left it.
public enum LookupStep: Sendable {
    /// Found, failed, or nothing left to ask.
    case ended(LookupOutcome)
    /// The archive had nothing for the record's ids: MusicBrainz is next.
    case needsMusicBrainz(PendingLookup)
}
