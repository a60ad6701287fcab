/// CRC-32 (ISO 3309, as PNG chunks use), slicing by eight bytes at a time.
public enum CRC32 {
    private static let tables: [[UInt32]] = {
        var tables = [[UInt32]](repeating: [UInt32](repeating: 0, count: 256), count: 8)
        for byte in 0..<256 {
            var crc = UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
            tables[0][byte] = crc
        }
        for byte in 0..<256 {
            for slice in 1..<8 {
                let previous = tables[slice - 1][byte]
                tables[slice][byte] = (previous >> 8) ^ tables[0][Int(previous & 0xFF)]
            }
        }
        return tables
    }()

    /// The CRC of `bytes`, continuing from `crc` (start with 0).
    public static func checksum(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
        var value = ~crc
        var index = 0
        let count = bytes.count
        tables.withUnsafeBufferPointer { t in
            let t0 = t[0], t1 = t[1], t2 = t[2], t3 = t[3], t4 = t[4], t5 = t[5], t6 = t[6], t7 = t[7]
            while count - index >= 8 {
                let low = value ^ (UInt32(bytes[index]) | UInt32(bytes[index + 1]) << 8
                    | UInt32(bytes[index + 2]) << 16 | UInt32(bytes[index + 3]) << 24)
                value = t7[Int(low & 0xFF)] ^ t6[Int((low >> 8) & 0xFF)] ^ t5[Int((low >> 16) & 0xFF)]
                    ^ t4[Int(low >> 24)] ^ t3[Int(bytes[index + 4])] ^ t2[Int(bytes[index + 5])]
                    ^ t1[Int(bytes[index + 6])] ^ t0[Int(bytes[index + 7])]
                index += 8
            }
            while index < count {
                value = t0[Int((value ^ UInt32(bytes[index])) & 0xFF)] ^ (value >> 8)
                index += 1
            }
        }
        return ~value
    }

    public static func checksum(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0) }
    }
}
