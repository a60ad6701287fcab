import Synchronization

/// Tells conversions under way to give up (the daemon is stopping): the JPEG
/// decoder and the PNG encoder look at it between batches of rows and throw
/// `CoverImageError.cancelled`, so a stop does not wait for a large cover.
///
/// Threading: set on one thread, read on the conversion threads; an atomic, so no lock.
public final class ConversionCancellation: Sendable {
    private let cancelled = Atomic<Bool>(false)
    /// Looks left before the conversion cancels itself: tests stop a conversion midway with it.
    private let looksLeft: Atomic<Int>

    public init() { looksLeft = Atomic(.max) }

    /// Cancelled at the `looks`-th look (for tests: a stop that lands midway).
    init(cancellingAtLook looks: Int) { looksLeft = Atomic(looks) }

    public func cancel() { cancelled.store(true, ordering: .relaxed) }

    public var isCancelled: Bool {
        if cancelled.load(ordering: .relaxed) { return true }
        guard looksLeft.wrappingSubtract(1, ordering: .relaxed).newValue <= 0 else { return false }
        cancel()
        return true
    }

    /// Throws `.cancelled` once `cancel()` was called.
    func check() throws(CoverImageError) {
        if isCancelled { throw .cancelled }
    }
}
