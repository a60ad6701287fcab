import CoverdBase

/// How the cache makes each cover durable before renaming it into place,
/// decided once from its filesystem (`FlushBatcher`): told at start, since it
/// explains a sync's speed (one `fsync` per cover costs far more than one
/// `syncfs` per batch).
public struct CacheDurabilityChosen: BusMessage {
    /// The covers' directory (`covers/` under the cache directory).
    public var directory: String
    /// The method and the filesystem that decided it, worded for the log: "one syncfs per batch (XFS)".
    public var method: String

    public init(directory: String, method: String) {
        self.directory = directory
        self.method = method
    }
}
