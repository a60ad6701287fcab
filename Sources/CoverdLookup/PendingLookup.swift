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
