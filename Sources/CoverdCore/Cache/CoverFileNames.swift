/// The file names of many covers (`<id>.png`) in one buffer, each followed
/// by a NUL, with a flag each saying whether it is still wanted.
///
/// Why one buffer: at start-up the covers of cached rows are stamped in
/// batches while the index loads, and after a cache drop the index loads
/// faster than the read-ahead's lookups go, so most batches wait at once,
/// each holding its names. As an `AlbumID` each (a heap string for an id
/// over 15 bytes) they raised that start-up's peak: at 100,000 albums with
/// derived ids it was 117.4–119.4 MiB, with names packed 114.8–115.1.
struct CoverFileNames: Sendable {
    private var bytes: [UInt8] = []
    /// Where each name starts in `bytes`: a NUL inside an id cannot shift the names after it.
    private var starts: [UInt32] = []
    private var wanted: [Bool] = []
    /// How many names are expected, to size `bytes` once the first is known.
    private var expected = 0

    init() {}

    init(_ ids: [AlbumID]) {
        ids.forEach { append($0) }
    }

    mutating func reserveCapacity(_ count: Int) {
        starts.reserveCapacity(count)
        wanted.reserveCapacity(count)
        expected = count
    }

    mutating func append(_ id: AlbumID) {
        // Sized by the first name, not left to double: ".png" and a NUL make 5 bytes more, and 3 to
        // spare let ids a little longer than the first fit too (a library's are of similar lengths).
        if bytes.isEmpty, expected > 0 { bytes.reserveCapacity(expected * (id.rawValue.utf8.count + 8)) }
        precondition(bytes.count <= Int(UInt32.max), "cover names beyond 4 GiB in one batch")
        starts.append(UInt32(bytes.count))
        wanted.append(true)
        bytes.append(contentsOf: id.rawValue.utf8)
        bytes.append(contentsOf: ".png".utf8)
        bytes.append(0)
    }

    /// Leaves the `index`-th name out of a lookup.
    mutating func skip(_ index: Int) {
        wanted[index] = false
    }

    /// `body` with each name as a C string (valid only during its call) and
    /// whether it is wanted, in order.
    func mapNames<T>(_ body: (UnsafePointer<CChar>, Bool) -> T) -> [T] {
        bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { names in
                guard let base = names.baseAddress else { return [] }  // Empty: no names either.
                // A NUL inside an id (the index holds none) would only cut its own name short.
                return starts.indices.map { body(base + Int(starts[$0]), wanted[$0]) }
            }
        }
    }
}
