import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A temporary cover's descriptor, kept open from its write until its batch
/// is durable, so that its pages can then leave the page cache.
///
/// Covers are written once and rarely read soon after: kept cached, a sync
/// of 10,000 of them left 1.5 GB in the page cache, pushing other programs'
/// data out of memory; dropped once clean, it leaves a few MiB, in the same
/// time (see README, Performance).
///
/// Released exactly once, whichever comes first: `dropCachedPages()`,
/// `release()` or `deinit`; the descriptor is swapped out atomically, so two
/// copies of a `TemporaryCover` never close it twice.
public final class WrittenFile: Sendable {
    private let descriptor: Atomic<Int32>
    private let budget: WrittenFileBudget

    init(descriptor: Int32, budget: WrittenFileBudget) {
        self.descriptor = Atomic(descriptor)
        self.budget = budget
    }

    deinit {
        release()
    }

    /// Call once the data is durable: clean pages are dropped (dirty ones would only be written back).
    public func dropCachedPages() {
        let fd = descriptor.exchange(-1, ordering: .acquiringAndReleasing)
        guard fd >= 0 else { return }
        // Advice only: a failure leaves the pages cached, as before.
        _ = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED)
        close(fd)
        budget.giveBack()
    }

    /// Closes the descriptor, leaving the pages to the kernel.
    public func release() {
        let fd = descriptor.exchange(-1, ordering: .acquiringAndReleasing)
        guard fd >= 0 else { return }
        close(fd)
        budget.giveBack()
    }
}

/// How many temporary files may stay open waiting for their flush. A slow
/// disk can hold thousands of covers between write and flush; past this
/// many they are closed at once (and left cached), so the daemon stays far
/// from its descriptor limit (1,024 by default for a service).
final class WrittenFileBudget: Sendable {
    let limit: Int
    private let open = Atomic<Int>(0)

    init(limit: Int = 256) {
        self.limit = limit
    }

    var openCount: Int { open.load(ordering: .relaxed) }

    /// Takes one place, or returns false when all are taken.
    func take() -> Bool {
        var current = open.load(ordering: .relaxed)
        while current < limit {
            let (exchanged, original) = open.compareExchange(
                expected: current, desired: current + 1, ordering: .acquiringAndReleasing)
            if exchanged { return true }
            current = original
        }
        return false
    }

    func giveBack() {
        open.subtract(1, ordering: .acquiringAndReleasing)
    }
}
