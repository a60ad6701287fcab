/// One object of a binary property list. Containers hold references
/// (object-table indices), resolved on demand, so that a hostile file with
/// shared or cyclic references costs nothing until it is walked.
public enum PropertyListObject: Sendable, Equatable {
    case null
    case bool(Bool)
    case integer(Int64)
    case real(Double)
    case date(Double)
    case data([UInt8])
    case string(String)
    case uid(Int)
    case array([Int])
    case dictionary([(key: Int, value: Int)])

    public static func == (lhs: PropertyListObject, rhs: PropertyListObject) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case let (.bool(a), .bool(b)): return a == b
        case let (.integer(a), .integer(b)): return a == b
        case let (.real(a), .real(b)), let (.date(a), .date(b)): return a == b
        case let (.data(a), .data(b)): return a == b
        case let (.string(a), .string(b)): return a == b
        case let (.uid(a), .uid(b)): return a == b
        case let (.array(a), .array(b)): return a == b
        case let (.dictionary(a), .dictionary(b)): return a.elementsEqual(b) { $0.key == $1.key && $0.value == $1.value }
        default: return false
        }
    }
}

/// A bounds-checked reader of the `bplist00` format (what NSKeyedArchiver writes).
///
/// Every offset, count and reference is checked against the buffer before use;
/// malformed input throws a `reason` and never traps.
public struct BinaryPropertyList: Sendable {
    public struct FormatError: Error, Sendable, Equatable, CustomStringConvertible {
        public var reason: String
        public var description: String { reason }
    }

    private let bytes: [UInt8]
    private let offsetSize: Int
    private let referenceSize: Int
    private let objectCount: Int
    private let offsetTableStart: Int
    public let topObject: Int

    public init(_ bytes: [UInt8]) throws(FormatError) {
        guard bytes.count >= 8 + 32, bytes.starts(with: Array("bplist0".utf8)) else {
            throw FormatError(reason: "not a binary property list")
        }
        let trailer = bytes.count - 32
        offsetSize = Int(bytes[trailer + 6])
        referenceSize = Int(bytes[trailer + 7])
        let count = BinaryPropertyList.bigEndian(bytes, at: trailer + 8, size: 8)
        let top = BinaryPropertyList.bigEndian(bytes, at: trailer + 16, size: 8)
        let tableStart = BinaryPropertyList.bigEndian(bytes, at: trailer + 24, size: 8)
        guard (1...8).contains(offsetSize), (1...8).contains(referenceSize) else {
            throw FormatError(reason: "invalid trailer (offset size \(offsetSize), reference size \(referenceSize))")
        }
        guard count > 0, count <= UInt64(bytes.count), top < count, tableStart >= 8,
            tableStart <= UInt64(trailer), count * UInt64(offsetSize) <= UInt64(trailer) - tableStart
        else {
            throw FormatError(reason: "invalid trailer (object table out of bounds)")
        }
        self.bytes = bytes
        self.objectCount = Int(count)
        self.topObject = Int(top)
        self.offsetTableStart = Int(tableStart)
    }

    /// The object at `reference` (an index into the object table).
    public func object(_ reference: Int) throws(FormatError) -> PropertyListObject {
        guard reference >= 0, reference < objectCount else {
            throw FormatError(reason: "object reference \(reference) out of range")
        }
        let offset = Int(clamping: BinaryPropertyList.bigEndian(bytes, at: offsetTableStart + reference * offsetSize, size: offsetSize))
        guard offset >= 8, offset < offsetTableStart else {
            throw FormatError(reason: "object \(reference) has an offset outside the object area")
        }
        let marker = bytes[offset]
        let low = Int(marker & 0x0F)
        switch marker >> 4 {
        case 0x0:
            switch marker {
            case 0x00: return .null
            case 0x08: return .bool(false)
            case 0x09: return .bool(true)
            default: throw FormatError(reason: "unknown marker 0x\(String(marker, radix: 16))")
            }
        case 0x1:
            guard low <= 3 else { throw FormatError(reason: "integer wider than 64 bits") }
            let size = 1 << low
            try need(offset + 1, size)
            let raw = BinaryPropertyList.bigEndian(bytes, at: offset + 1, size: size)
            return .integer(size == 8 ? Int64(bitPattern: raw) : Int64(raw))
        case 0x2, 0x3:
            let size = marker == 0x33 ? 8 : 1 << low
            guard size == 4 || size == 8 else { throw FormatError(reason: "invalid real size") }
            try need(offset + 1, size)
            let raw = BinaryPropertyList.bigEndian(bytes, at: offset + 1, size: size)
            let value = size == 4 ? Double(Float(bitPattern: UInt32(raw))) : Double(bitPattern: raw)
            return marker == 0x33 ? .date(value) : .real(value)
        case 0x4:
            let (count, start) = try length(low, at: offset)
            try need(start, count)
            return .data(Array(bytes[start..<start + count]))
        case 0x5:
            let (count, start) = try length(low, at: offset)
            try need(start, count)
            return .string(String(decoding: bytes[start..<start + count], as: UTF8.self))
        case 0x6:
            let (count, start) = try length(low, at: offset)
            guard count <= bytes.count / 2 else { throw FormatError(reason: "string length out of bounds") }
            try need(start, count * 2)
            let units = (0..<count).map { UInt16(bytes[start + 2 * $0]) << 8 | UInt16(bytes[start + 2 * $0 + 1]) }
            return .string(String(decoding: units, as: UTF16.self))
        case 0x8:
            try need(offset + 1, low + 1)
            let raw = BinaryPropertyList.bigEndian(bytes, at: offset + 1, size: low + 1)
            guard raw < UInt64(objectCount) else { throw FormatError(reason: "UID \(raw) out of range") }
            return .uid(Int(raw))
        case 0xA, 0xC:
            let (count, start) = try length(low, at: offset)
            return .array(try references(count: count, at: start))
        case 0xD:
            let (count, start) = try length(low, at: offset)
            guard count <= bytes.count / 2 else { throw FormatError(reason: "dictionary size out of bounds") }
            let keys = try references(count: count, at: start)
            let values = try references(count: count, at: start + count * referenceSize)
            return .dictionary(zip(keys, values).map { (key: $0, value: $1) })
        default:
            throw FormatError(reason: "unknown marker 0x\(String(marker, radix: 16))")
        }
    }

    private func need(_ start: Int, _ count: Int) throws(FormatError) {
        guard count >= 0, start >= 0, start <= offsetTableStart, count <= offsetTableStart - start else {
            throw FormatError(reason: "object runs past the end of the object area")
        }
    }

    /// A container's element count: in the marker's low nibble, or (0xF) an integer object after it.
    private func length(_ low: Int, at offset: Int) throws(FormatError) -> (count: Int, start: Int) {
        if low != 0x0F { return (low, offset + 1) }
        try need(offset + 1, 1)
        let intMarker = bytes[offset + 1]
        guard intMarker >> 4 == 0x1, intMarker & 0x0F <= 3 else { throw FormatError(reason: "invalid length") }
        let size = 1 << Int(intMarker & 0x0F)
        try need(offset + 2, size)
        let count = BinaryPropertyList.bigEndian(bytes, at: offset + 2, size: size)
        guard count <= UInt64(bytes.count) else { throw FormatError(reason: "length \(count) out of bounds") }
        return (Int(count), offset + 2 + size)
    }

    private func references(count: Int, at start: Int) throws(FormatError) -> [Int] {
        guard count <= bytes.count else { throw FormatError(reason: "container size out of bounds") }
        try need(start, count * referenceSize)
        return (0..<count).map {
            Int(clamping: BinaryPropertyList.bigEndian(bytes, at: start + $0 * referenceSize, size: referenceSize))
        }
    }

    /// Callers check bounds first; sizes are 1...8.
    private static func bigEndian(_ bytes: [UInt8], at offset: Int, size: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in offset..<offset + size { value = value << 8 | UInt64(bytes[index]) }
        return value
    }
}
