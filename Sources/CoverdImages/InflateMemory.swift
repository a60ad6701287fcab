import Synchronization

/// The bytes every check inflating an image whole in memory may hold at once
/// (its rows, and the copy of a stream split over several IDAT chunks), shared
/// by all the threads that validate. A check that finds no room inflates
/// through zlib's small buffer instead: slower, but the memory stays bounded
/// however many workers run and however large their covers.
///
/// The daemon makes one and hands it to every validator it makes
/// (`CoverImagePipeline`, the checks of cached files), so the bound is the
/// process's; a validator made on its own has a room of its own.
package final class InflateMemory: Sendable {
    package let limit: Int
    private let used = Mutex(0)

    /// The default is room for one full-size in-memory check (`PNGImageData.inMemoryLimit`), or several smaller ones.
    package init(limit: Int = 8 << 20) {
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

    /// Gives back `bytes` taken before; giving back more than was taken is a bookkeeping bug.
    package func give(_ bytes: Int) {
        used.withLock { used in
            assert(used >= bytes, "InflateMemory: \(bytes) bytes given back, \(used) taken")
            used = max(0, used - bytes)
        }
    }

    package var inUse: Int { used.withLock { $0 } }
}
