/// The room on the cache's filesystem, as measured once: a cover fits when
/// writing it leaves `reserve` bytes free.
public struct FreeSpace: Sendable, Equatable {
    /// Bytes available to coverd; nil when unknown (a write then finds out).
    public var available: Int?
    /// Bytes a cover write leaves untouched (0: no check).
    public var reserve: Int

    public init(available: Int?, reserve: Int) {
        self.available = available
        self.reserve = reserve
    }

    public func fits(_ bytes: Int) -> Bool {
        guard reserve > 0, let available else { return true }
        return available >= bytes + reserve
    }
}
