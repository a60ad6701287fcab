import CoverdImages

/// Builds real PNG files for tests: RGB, 8 bits, stored (uncompressed)
/// deflate blocks, correct CRCs and Adler-32, so any decoder reads them.
public enum PNGFixture {
    /// A `width`×`height` image whose pixels depend on `seed`, so different seeds give different bytes.
    public static func make(width: Int = 16, height: Int = 16, seed: Int = 1) -> [UInt8] {
        var raw: [UInt8] = []
        raw.reserveCapacity((width * 3 + 1) * height)
        for y in 0..<height {
            raw.append(0)  // filter: none
            for x in 0..<width {
                raw.append(UInt8(truncatingIfNeeded: x &* seed &+ y))
                raw.append(UInt8(truncatingIfNeeded: y &* seed &+ x))
                raw.append(UInt8(truncatingIfNeeded: seed &* 31))
            }
        }
        var header = bigEndian(UInt32(width)) + bigEndian(UInt32(height))
        header += [8, 2, 0, 0, 0]
        return signature + chunk("IHDR", header) + chunk("IDAT", zlibStored(raw)) + chunk("IEND", [])
    }

    /// A PNG whose IHDR claims `width`×`height` (with a tiny, valid-CRC body): a decompression bomb header.
    public static func claiming(width: Int, height: Int) -> [UInt8] {
        var header = bigEndian(UInt32(width)) + bigEndian(UInt32(height))
        header += [8, 2, 0, 0, 0]
        return signature + chunk("IHDR", header) + chunk("IDAT", zlibStored([0, 0, 0, 0])) + chunk("IEND", [])
    }

    public static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    public static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let typeBytes = Array(type.utf8)
        return bigEndian(UInt32(data.count)) + typeBytes + data + bigEndian(CRC32.checksum(typeBytes + data))
    }

    /// The same bytes with one byte of the first IDAT payload flipped: the CRC no longer matches.
    public static func withBrokenCRC(_ png: [UInt8]) -> [UInt8] {
        var bytes = png
        bytes[8 + 25 + 8 + 2] ^= 0xFF
        return bytes
    }

    public static func bigEndianForTests(_ value: UInt32) -> [UInt8] { bigEndian(value) }
    public static func zlibStoredForTests(_ data: [UInt8]) -> [UInt8] { zlibStored(data) }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
    }

    /// zlib stream of stored blocks (at most 65535 bytes each).
    static func zlibStored(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var offset = 0
        repeat {
            let length = min(65_535, data.count - offset)
            let final: UInt8 = offset + length >= data.count ? 1 : 0
            out.append(final)
            out += [UInt8(length & 0xFF), UInt8(length >> 8), UInt8(~length & 0xFF), UInt8((~length >> 8) & 0xFF)]
            out += data[offset..<offset + length]
            offset += length
        } while offset < data.count
        var a: UInt32 = 1
        var b: UInt32 = 0
        for byte in data {
            a = (a + UInt32(byte)) % 65_521
            b = (b + a) % 65_521
        }
        return out + bigEndian(b << 16 | a)
    }
}
