import CoverdImages

/// What the coordinator needs of the configuration. The daemon hands it a
/// new one on reload (`CoverCoordinator.apply`); covers already being
/// stored keep the settings they started with.
public struct SyncSettings: Sendable, Equatable {
    public var retry: RetryPolicy
    public var imageLimits: ImageLimits
    /// How converted (or scaled) covers are written.
    public var imageOutput: ImageOutput
    /// The largest body a download may have (`fetch.max_bytes`); a cached cover read back is bounded by it too.
    public var maxBodyBytes: Int
    /// How long the cover of an album that left the records is kept (`cache.keep_removed`); zero: not at all.
    public var keepRemoved: Duration
    /// After how long a cached cover is outdated and revalidated (`freshness.max_age`); zero: never.
    public var freshnessMaxAge: Duration

    public init(
        retry: RetryPolicy = RetryPolicy(), imageLimits: ImageLimits = ImageLimits(), imageOutput: ImageOutput = ImageOutput(),
        maxBodyBytes: Int = 32 * 1024 * 1024, keepRemoved: Duration = .seconds(604_800), freshnessMaxAge: Duration = .seconds(2_592_000)
    ) {
        self.keepRemoved = keepRemoved
        self.freshnessMaxAge = freshnessMaxAge
        self.retry = retry
        self.imageLimits = imageLimits
        self.imageOutput = imageOutput
        self.maxBodyBytes = maxBodyBytes
    }
}
