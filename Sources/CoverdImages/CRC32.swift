import CDeflate

/// CRC-32 (ISO 3309, as PNG chunks use), computed by libdeflate, which uses
/// the CPU's carry-less multiply where there is one (faster than zlib's
/// `crc32_z`, bench/HISTORY.md): every byte of every downloaded cover goes through it.
public enum CRC32 {
    /// The CRC of `bytes`, continuing from `crc` (start with 0).
    public static func checksum(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return crc }
        return libdeflate_crc32(crc, base, bytes.count)
    }

    public static func checksum(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0) }
    }
}
