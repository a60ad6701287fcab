/// Where each album of a JSON record file lies in its bytes: the entries of
/// its list (the root array, or the `albums` array of `{"albums": [...]}`),
/// as byte ranges, so that one can be cut out and every other byte kept.
///
/// It walks text the decoder has already accepted, so it only needs to tell
/// strings, nesting and separators apart; anything it cannot follow gives nil.
struct JSONRecordSpans {
    private let bytes: [UInt8]
    private var index = 0

    /// The list's entries in order, or nil when the file is not one of the list forms.
    static func entries(in bytes: [UInt8]) -> [Range<Int>]? {
        var walker = JSONRecordSpans(bytes: bytes)
        return walker.rootEntries()
    }

    private init(bytes: [UInt8]) {
        self.bytes = bytes
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
    }

    private mutating func rootEntries() -> [Range<Int>]? {
        skipWhitespace()
        guard index < bytes.count else { return nil }
        if bytes[index] == UInt8(ascii: "[") { return arrayEntries() }
        guard bytes[index] == UInt8(ascii: "{") else { return nil }
        index += 1
        // {"albums": [...]}: every member in order; a repeated "albums" key is
        // followed to its last one, as the decoder keeps the last.
        var found: [Range<Int>]?
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") { return nil }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
            let keyStart = index
            guard skipString() else { return nil }
            let key = bytes[keyStart..<index]
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return nil }
            index += 1
            skipWhitespace()
            if key.elementsEqual(#""albums""#.utf8) {
                guard index < bytes.count, bytes[index] == UInt8(ascii: "[") else { return nil }
                guard let entries = arrayEntries() else { return nil }
                index += 1  // past the array's "]"
                found = entries
            } else {
                guard skipValue() else { return nil }
            }
            skipWhitespace()
            guard index < bytes.count else { return nil }
            if bytes[index] == UInt8(ascii: "}") { return found }
            guard bytes[index] == UInt8(ascii: ",") else { return nil }
            index += 1
        }
    }

    /// The entries of the array starting at `index`.
    private mutating func arrayEntries() -> [Range<Int>]? {
        index += 1
        var entries: [Range<Int>] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") { return entries }
        while true {
            skipWhitespace()
            let start = index
            guard skipValue() else { return nil }
            entries.append(start..<index)
            skipWhitespace()
            guard index < bytes.count else { return nil }
            if bytes[index] == UInt8(ascii: "]") { return entries }
            guard bytes[index] == UInt8(ascii: ",") else { return nil }
            index += 1
        }
    }

    /// Moves past one value; false when the text ends first.
    private mutating func skipValue() -> Bool {
        guard index < bytes.count else { return false }
        switch bytes[index] {
        case UInt8(ascii: "\""):
            return skipString()
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var depth = 0
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "\""):
                    guard skipString() else { return false }
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    if depth == 0 {
                        index += 1
                        return true
                    }
                default:
                    break
                }
                index += 1
            }
            return false
        default:
            // A number or a literal: up to the next separator.
            let start = index
            while index < bytes.count, !Self.ends(bytes[index]) { index += 1 }
            return index > start
        }
    }

    /// Moves past the string starting at `index`, escapes included.
    private mutating func skipString() -> Bool {
        index += 1
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\\"): index += 2
            case UInt8(ascii: "\""):
                index += 1
                return true
            default: index += 1
            }
        }
        return false
    }

    private mutating func skipWhitespace() {
        while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
    }

    private static func ends(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: ",") || byte == UInt8(ascii: "]") || byte == UInt8(ascii: "}") || [0x20, 0x09, 0x0A, 0x0D].contains(byte)
    }
}
