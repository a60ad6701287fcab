import CZlib

/// CRC-32 (ISO 3309, as PNG chunks use), computed by zlib's `crc32_z`,
/// which is about half again as fast as a table-driven loop in Swift; every
/// byte of every downloaded cover goes through it.
public enum CRC32 {
    /// The CRC of `bytes`, continuing from `crc` (start with 0).
    public static func checksum(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return crc }
        return UInt32(truncatingIfNeeded: crc32_z(UInt(crc), base.assumingMemoryBound(to: UInt8.self), bytes.count))
    }

    public static func checksum(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0) }
    }
}
