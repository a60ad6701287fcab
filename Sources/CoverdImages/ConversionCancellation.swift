import Synchronization

/// Tells conversions under way to give up (the daemon is stopping): the JPEG
/// decoder and the PNG encoder look at it between batches of rows and throw
/// `CoverImageError.cancelled`, so a stop does not wait for a large cover.
///
/// Threading: set on one thread, read on the conversion threads; an atomic, so no lock.
public final class ConversionCancellation: Sendable {
    private let cancelled = Atomic<Bool>(false)

    public init() {}

    public func cancel() { cancelled.store(true, ordering: .relaxed) }

    public var isCancelled: Bool { cancelled.load(ordering: .relaxed) }

    /// Throws `.cancelled` once `cancel()` was called.
    func check() throws(CoverImageError) {
        if isCancelled { throw .cancelled }
    }
}
