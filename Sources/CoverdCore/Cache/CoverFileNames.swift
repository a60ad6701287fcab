/// The file names of many covers (`<id>.png`) in one buffer, each followed
/// by a NUL, for `CoverStore.stamps(of:)`.
///
/// Why one buffer: each name is handed to `fstatat` as a C string, and a
/// batch of a thousand covers then costs two allocations, not one C string
/// per cover (a heap string for every id over 15 bytes).
struct CoverFileNames: Sendable {
    private var bytes: [UInt8] = []
    /// Where each name starts in `bytes`: a NUL inside an id cannot shift the names after it.
    private var starts: [UInt32] = []

    init(_ ids: [AlbumID]) {
        starts.reserveCapacity(ids.count)
        // ".png" and a NUL make 5 bytes more, and 3 to spare let ids a little longer than the first fit too.
        bytes.reserveCapacity(ids.count * ((ids.first?.rawValue.utf8.count ?? 0) + 8))
        ids.forEach { append($0) }
    }

    private mutating func append(_ id: AlbumID) {
        precondition(bytes.count <= Int(UInt32.max), "cover names beyond 4 GiB in one batch")
        starts.append(UInt32(bytes.count))
        bytes.append(contentsOf: id.rawValue.utf8)
        bytes.append(contentsOf: ".png".utf8)
        bytes.append(0)
    }

    /// `body` with each name as a C string (valid only during its call), in order.
    func mapNames<T>(_ body: (UnsafePointer<CChar>) -> T) -> [T] {
        bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { names in
                guard let base = names.baseAddress else { return [] }  // Empty: no names either.
                // A NUL inside an id (the index holds none) would only cut its own name short.
                return starts.map { body(base + Int($0)) }
            }
        }
    }
}
