/// The file names of many covers (`<id>.png`) in one buffer, each followed
/// by a NUL, with a flag each saying whether it is still wanted.
///
/// Why one buffer: at start-up the covers of cached rows are stamped in
/// batches while the index loads, and after a cache drop the index loads
/// faster than the disk answers, so nearly every batch waits at once. Held
/// as one `AlbumID` each, 100,000 ids of 93 characters took 15 MB at the
/// start-up's memory peak; here a name costs its bytes and a few more.
public struct CoverFileNames: Sendable {
    private var bytes: [UInt8] = []
    /// Where each name starts in `bytes`: a NUL inside an id cannot shift the names after it.
    private var starts: [UInt32] = []
    private var wanted: [Bool] = []

    public init() {}

    public init(_ ids: [AlbumID]) {
        ids.forEach { append($0) }
    }

    public var count: Int { starts.count }

    public mutating func reserveCapacity(_ count: Int) {
        starts.reserveCapacity(count)
        wanted.reserveCapacity(count)
    }

    public mutating func append(_ id: AlbumID) {
        starts.append(UInt32(bytes.count))
        wanted.append(true)
        bytes.append(contentsOf: id.rawValue.utf8)
        bytes.append(contentsOf: ".png".utf8)
        bytes.append(0)
    }

    /// Leaves the `index`-th name out of a lookup.
    public mutating func skip(_ index: Int) {
        wanted[index] = false
    }

    /// `body` with each name as a C string (valid only during its call) and
    /// whether it is wanted, in order.
    func map<T>(_ body: (UnsafePointer<CChar>, Bool) -> T) -> [T] {
        bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { names in
                guard let base = names.baseAddress else { return [] }  // Empty: no names either.
                // A NUL inside an id (the index holds none) would only cut its own name short.
                return starts.indices.map { body(base + Int(starts[$0]), wanted[$0]) }
            }
        }
    }
}
