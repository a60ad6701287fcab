/// JSON string literals, escaped per RFC 8259.
package enum JSONText {
    /// `text` as a JSON string literal. Works on UTF-8 bytes: most text needs
    /// no escaping at all and is copied whole, where quoting scalar by scalar
    /// was much of a large `status --json`.
    package static func quote(_ text: String?) -> String {
        var out: [UInt8] = []
        append(text, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends `text` as a JSON string literal (or `null`) to `out`.
    package static func append(_ text: String?, to out: inout [UInt8]) {
        guard var text else {
            out += "null".utf8
            return
        }
        text.withUTF8 { bytes in
            out.append(0x22)
            if !bytes.contains(where: needsEscape) && !containsLineSeparator(bytes) {
                out += bytes
                out.append(0x22)
                return
            }
            var index = 0
            while index < bytes.count {
                let byte = bytes[index]
                // U+2028 and U+2029 (E2 80 A8/A9) are valid JSON but break JavaScript readers.
                if byte == 0xE2, index + 2 < bytes.count, bytes[index + 1] == 0x80, bytes[index + 2] == 0xA8 || bytes[index + 2] == 0xA9 {
                    out += (bytes[index + 2] == 0xA8 ? "\\u2028" : "\\u2029").utf8
                    index += 3
                    continue
                }
                switch byte {
                case 0x22: out += [0x5C, 0x22]
                case 0x5C: out += [0x5C, 0x5C]
                case 0x0A: out += [0x5C, 0x6E]
                case 0x0D: out += [0x5C, 0x72]
                case 0x09: out += [0x5C, 0x74]
                case ..<0x20:
                    let hex = Array("0123456789abcdef".utf8)
                    out += [0x5C, 0x75, 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
                default: out.append(byte)
                }
                index += 1
            }
            out.append(0x22)
        }
    }

    private static func needsEscape(_ byte: UInt8) -> Bool { byte < 0x20 || byte == 0x22 || byte == 0x5C }

    private static func containsLineSeparator(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard bytes.count >= 3 else { return false }
        for index in 0..<(bytes.count - 2) where bytes[index] == 0xE2 && bytes[index + 1] == 0x80 {
            if bytes[index + 2] == 0xA8 || bytes[index + 2] == 0xA9 { return true }
        }
        return false
    }
}
