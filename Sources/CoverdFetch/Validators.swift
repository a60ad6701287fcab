/// A cached cover's HTTP validators (contract §8): sent back as
/// `If-None-Match` and `If-Modified-Since` to ask whether it changed.
public struct Validators: Sendable, Equatable {
    public var etag: String?
    public var lastModified: String?

    public init(etag: String?, lastModified: String?) {
        self.etag = etag
        self.lastModified = lastModified
    }

    /// Whether there is anything to send: a cover served with neither can only be downloaded again.
    public var isEmpty: Bool { etag == nil && lastModified == nil }
}
