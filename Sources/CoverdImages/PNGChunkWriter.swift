/// Lays out a PNG file: the signature, then chunks of length, type, data and
/// CRC-32 (over type and data), as the PNG specification's section 5 has them.
struct PNGChunkWriter {
    private(set) var bytes: [UInt8] = []

    /// Starts a file; `capacity` avoids regrowing when the size is known.
    init(capacity: Int) {
        bytes.reserveCapacity(capacity)
        bytes.append(contentsOf: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
    }

    /// The bytes a chunk of `dataCount` bytes takes.
    static func size(ofChunkHolding dataCount: Int) -> Int { 12 + dataCount }

    mutating func append(_ type: StaticString, _ data: UnsafeRawBufferPointer) {
        precondition(type.utf8CodeUnitCount == 4 && data.count <= Int(Int32.max), "a PNG chunk type is 4 letters, its length at most 2^31-1")
        appendBigEndian(UInt32(data.count))
        let typeStart = bytes.count
        type.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: data)
        let crc = bytes.withUnsafeBytes { all in
            CRC32.checksum(UnsafeRawBufferPointer(rebasing: all[typeStart...]))
        }
        appendBigEndian(crc)
    }

    mutating func append(_ type: StaticString, _ data: [UInt8]) {
        data.withUnsafeBytes { append(type, $0) }
    }

    private mutating func appendBigEndian(_ value: UInt32) {
        bytes.append(contentsOf: [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)])
    }
}
