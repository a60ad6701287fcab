import Synchronization

/// The bytes every check inflating an image whole in memory may hold at once
/// (its rows, and the copy of a stream split over several IDAT chunks), shared
/// by all the threads that validate. A check that finds no room inflates
/// through zlib's small buffer instead: slower, but the memory stays bounded
/// however many workers run and however large their covers.
package final class InflateMemory: Sendable {
    package let limit: Int
    private let used = Mutex(0)

    /// Room for one full-size in-memory check (`PNGImageData.inMemoryLimit`), or several smaller ones.
    package static let shared = InflateMemory(limit: 8 << 20)

    package init(limit: Int) {
        self.limit = limit
    }

    /// Takes `bytes` if they fit beside what is taken; false leaves everything as it was.
    package func take(_ bytes: Int) -> Bool {
        used.withLock { used in
            guard used + bytes <= limit else { return false }
            used += bytes
            return true
        }
    }

    package func give(_ bytes: Int) {
        used.withLock { $0 = max(0, $0 - bytes) }
    }

    package var inUse: Int { used.withLock { $0 } }
}
