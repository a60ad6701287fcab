/// Reads the orientation tag (0x0112) from a JPEG's APP1 Exif segment.
///
/// Every offset comes from the file and is checked before use: a hostile
/// segment can only make the answer "no orientation" (1).
enum ExifOrientation {
    static func read(_ segment: UnsafeRawBufferPointer) -> Int {
        let header: [UInt8] = Array("Exif".utf8) + [0, 0]
        guard segment.count >= 14, header.indices.allSatisfy({ segment[$0] == header[$0] }) else { return 1 }
        let tiff = UnsafeRawBufferPointer(rebasing: segment[6...])
        let littleEndian: Bool
        switch (tiff[0], tiff[1]) {
        case (0x49, 0x49): littleEndian = true
        case (0x4D, 0x4D): littleEndian = false
        default: return 1
        }
        func u16(_ offset: Int) -> Int? {
            guard offset >= 0, offset + 2 <= tiff.count else { return nil }
            let a = Int(tiff[offset]), b = Int(tiff[offset + 1])
            return littleEndian ? a | b << 8 : a << 8 | b
        }
        func u32(_ offset: Int) -> Int? {
            guard let high = u16(littleEndian ? offset + 2 : offset), let low = u16(littleEndian ? offset : offset + 2) else { return nil }
            return high << 16 | low
        }
        guard u16(2) == 42, let ifd = u32(4), let count = u16(ifd) else { return 1 }
        for entry in 0..<count {
            let at = ifd + 2 + entry * 12
            guard let tag = u16(at) else { return 1 }
            guard tag == 0x0112 else { continue }
            // SHORT, one value, stored in the first two bytes of the value field.
            guard u16(at + 2) == 3, let value = u16(at + 8), (1...8).contains(value) else { return 1 }
            return value
        }
        return 1
    }
}
