/// A strict RFC 8259 JSON parser, for record files and web services' answers.
///
/// Written for hostile input: it validates UTF-8, rejects raw control
/// characters and unpaired surrogates, bounds nesting depth before recursing
/// (so a 100,000-deep array is an error, not a stack overflow), and reports
/// every problem with its line and column.
public struct JSONParser: Sendable {
    public var maxDepth: Int

    public init(maxDepth: Int = 64) {
        self.maxDepth = maxDepth
    }

    public func parse(_ bytes: [UInt8]) throws(JSONSyntaxError) -> JSONNode {
        let result: Result<JSONNode, JSONSyntaxError> = bytes.withUnsafeBufferPointer { buffer in
            var cursor = JSONCursor(buffer: buffer, maxDepth: maxDepth)
            do throws(JSONSyntaxError) {
                return .success(try cursor.parseDocument())
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }
}

/// The parsing state over one buffer; lives only inside `JSONParser.parse`.
private struct JSONCursor {
    let buffer: UnsafeBufferPointer<UInt8>
    let maxDepth: Int
    var index = 0
    var line = 1
    var lineStart = 0

    init(buffer: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
        self.buffer = buffer
        self.maxDepth = maxDepth
    }

    mutating func parseDocument() throws(JSONSyntaxError) -> JSONNode {
        if buffer.count >= 3, buffer[0] == 0xEF, buffer[1] == 0xBB, buffer[2] == 0xBF {
            index = 3  // A UTF-8 byte order mark is tolerated, as editors write one.
        }
        skipWhitespace()
        if index == buffer.count { throw error("the file is empty") }
        let root = try parseValue(depth: 0)
        skipWhitespace()
        if index != buffer.count { throw error("unexpected data after the JSON value") }
        return root
    }

    func error(_ message: String) -> JSONSyntaxError {
        JSONSyntaxError(message: message, line: line, column: index - lineStart + 1)
    }

    mutating func skipWhitespace() {
        while index < buffer.count {
            switch buffer[index] {
            case 0x20, 0x09, 0x0D: index += 1
            case 0x0A:
                index += 1
                line += 1
                lineStart = index
            default: return
            }
        }
    }

    mutating func parseValue(depth: Int) throws(JSONSyntaxError) -> JSONNode {
        guard index < buffer.count else { throw error("unexpected end of file") }
        let startLine = line
        switch buffer[index] {
        case UInt8(ascii: "{"): return JSONNode(try parseObject(depth: depth + 1), line: startLine)
        case UInt8(ascii: "["): return JSONNode(try parseArray(depth: depth + 1), line: startLine)
        case UInt8(ascii: "\""): return JSONNode(.string(try parseString()), line: startLine)
        case UInt8(ascii: "t"): try expectLiteral("true"); return JSONNode(.bool(true), line: startLine)
        case UInt8(ascii: "f"): try expectLiteral("false"); return JSONNode(.bool(false), line: startLine)
        case UInt8(ascii: "n"): try expectLiteral("null"); return JSONNode(.null, line: startLine)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return JSONNode(.number(try parseNumber()), line: startLine)
        default:
            throw error("unexpected character \(describeByte(buffer[index]))")
        }
    }

    mutating func expectLiteral(_ literal: StaticString) throws(JSONSyntaxError) {
        let count = literal.utf8CodeUnitCount
        guard index + count <= buffer.count else { throw error("unexpected end of file") }
        let matches = literal.withUTF8Buffer { expected in
            (0..<count).allSatisfy { buffer[index + $0] == expected[$0] }
        }
        guard matches else { throw error("invalid literal") }
        index += count
    }

    mutating func parseObject(depth: Int) throws(JSONSyntaxError) -> JSONValue {
        guard depth <= maxDepth else { throw error("nesting deeper than \(maxDepth) levels") }
        index += 1
        // Records' objects have a handful of keys: one allocation instead of growing three times.
        var members: [String: JSONNode] = Dictionary(minimumCapacity: 6)
        skipWhitespace()
        if index < buffer.count, buffer[index] == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard index < buffer.count, buffer[index] == UInt8(ascii: "\"") else {
                throw error("expected a string key in object")
            }
            let key = try parseString()
            skipWhitespace()
            guard index < buffer.count, buffer[index] == UInt8(ascii: ":") else {
                throw error("expected ':' after object key")
            }
            index += 1
            skipWhitespace()
            members[key] = try parseValue(depth: depth)  // A repeated key: the last one wins.
            skipWhitespace()
            guard index < buffer.count else { throw error("unexpected end of file in object") }
            if buffer[index] == UInt8(ascii: ",") { index += 1; continue }
            if buffer[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
            throw error("expected ',' or '}' in object")
        }
    }

    mutating func parseArray(depth: Int) throws(JSONSyntaxError) -> JSONValue {
        guard depth <= maxDepth else { throw error("nesting deeper than \(maxDepth) levels") }
        index += 1
        var elements: [JSONNode] = []
        skipWhitespace()
        if index < buffer.count, buffer[index] == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue(depth: depth))
            skipWhitespace()
            guard index < buffer.count else { throw error("unexpected end of file in array") }
            if buffer[index] == UInt8(ascii: ",") { index += 1; continue }
            if buffer[index] == UInt8(ascii: "]") { index += 1; return .array(elements) }
            throw error("expected ',' or ']' in array")
        }
    }

    mutating func parseNumber() throws(JSONSyntaxError) -> String {
        let start = index
        if buffer[index] == UInt8(ascii: "-") { index += 1 }
        guard index < buffer.count, isDigit(buffer[index]) else { throw error("invalid number") }
        if buffer[index] == UInt8(ascii: "0") {
            index += 1
        } else {
            while index < buffer.count, isDigit(buffer[index]) { index += 1 }
        }
        if index < buffer.count, buffer[index] == UInt8(ascii: ".") {
            index += 1
            guard index < buffer.count, isDigit(buffer[index]) else { throw error("invalid number") }
            while index < buffer.count, isDigit(buffer[index]) { index += 1 }
        }
        if index < buffer.count, buffer[index] == UInt8(ascii: "e") || buffer[index] == UInt8(ascii: "E") {
            index += 1
            if index < buffer.count, buffer[index] == UInt8(ascii: "+") || buffer[index] == UInt8(ascii: "-") {
                index += 1
            }
            guard index < buffer.count, isDigit(buffer[index]) else { throw error("invalid number") }
            while index < buffer.count, isDigit(buffer[index]) { index += 1 }
        }
        return String(decoding: UnsafeBufferPointer(rebasing: buffer[start..<index]), as: UTF8.self)
    }

    func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    func describeByte(_ byte: UInt8) -> String {
        if byte >= 0x21 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        return "byte 0x" + String(byte, radix: 16, uppercase: true)
    }
}

extension JSONCursor {
    /// Parses a string starting at its opening quote. The common case (no
    /// escapes) is decoded straight from the buffer after UTF-8 validation.
    mutating func parseString() throws(JSONSyntaxError) -> String {
        index += 1
        let start = index
        var needsUnescaping = false
        while true {
            guard index < buffer.count else { throw error("unterminated string") }
            let byte = buffer[index]
            if byte == UInt8(ascii: "\"") { break }
            if byte == UInt8(ascii: "\\") {
                needsUnescaping = true
                index += 2
                continue
            }
            if byte < 0x20 { throw error("control character \(describeByte(byte)) in string") }
            if byte < 0x80 {
                index += 1
            } else {
                index += try utf8SequenceLength(at: index)
            }
        }
        let end = index
        index += 1
        let raw = UnsafeBufferPointer(rebasing: buffer[start..<end])
        if !needsUnescaping { return String(decoding: raw, as: UTF8.self) }
        return try unescape(raw, startingAt: start)
    }

    /// Validates one multi-byte UTF-8 sequence (no overlongs, no surrogates, at most U+10FFFF).
    func utf8SequenceLength(at position: Int) throws(JSONSyntaxError) -> Int {
        let lead = buffer[position]
        let length: Int
        var minimum: UInt32
        var scalar: UInt32
        switch lead {
        case 0xC2...0xDF: length = 2; minimum = 0x80; scalar = UInt32(lead & 0x1F)
        case 0xE0...0xEF: length = 3; minimum = 0x800; scalar = UInt32(lead & 0x0F)
        case 0xF0...0xF4: length = 4; minimum = 0x10000; scalar = UInt32(lead & 0x07)
        default: throw error("invalid UTF-8")
        }
        guard position + length <= buffer.count else { throw error("invalid UTF-8") }
        for offset in 1..<length {
            let continuation = buffer[position + offset]
            guard continuation & 0xC0 == 0x80 else { throw error("invalid UTF-8") }
            scalar = (scalar << 6) | UInt32(continuation & 0x3F)
        }
        guard scalar >= minimum, scalar <= 0x10FFFF, !(0xD800...0xDFFF).contains(scalar) else {
            throw error("invalid UTF-8")
        }
        return length
    }

    func unescape(_ raw: UnsafeBufferPointer<UInt8>, startingAt offset: Int) throws(JSONSyntaxError) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(raw.count)
        var i = 0
        while i < raw.count {
            let byte = raw[i]
            guard byte == UInt8(ascii: "\\") else {
                output.append(byte)
                i += 1
                continue
            }
            guard i + 1 < raw.count else { throw error("invalid escape in string") }
            switch raw[i + 1] {
            case UInt8(ascii: "\""): output.append(0x22)
            case UInt8(ascii: "\\"): output.append(0x5C)
            case UInt8(ascii: "/"): output.append(0x2F)
            case UInt8(ascii: "b"): output.append(0x08)
            case UInt8(ascii: "f"): output.append(0x0C)
            case UInt8(ascii: "n"): output.append(0x0A)
            case UInt8(ascii: "r"): output.append(0x0D)
            case UInt8(ascii: "t"): output.append(0x09)
            case UInt8(ascii: "u"):
                let (scalar, consumed) = try unicodeEscape(raw, at: i)
                output.append(contentsOf: Array(String(Character(scalar)).utf8))
                i += consumed
                continue
            default: throw error("invalid escape in string")
            }
            i += 2
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Decodes `\uXXXX`, joining a surrogate pair; returns the scalar and the bytes consumed.
    func unicodeEscape(_ raw: UnsafeBufferPointer<UInt8>, at i: Int) throws(JSONSyntaxError) -> (Unicode.Scalar, Int) {
        let high = try hex4(raw, at: i + 2)
        if (0xD800...0xDBFF).contains(high) {
            guard i + 12 <= raw.count, raw[i + 6] == UInt8(ascii: "\\"), raw[i + 7] == UInt8(ascii: "u") else {
                throw error("unpaired surrogate in string")
            }
            let low = try hex4(raw, at: i + 8)
            guard (0xDC00...0xDFFF).contains(low) else { throw error("unpaired surrogate in string") }
            let value = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
            guard let scalar = Unicode.Scalar(value) else { throw error("invalid \\u escape") }
            return (scalar, 12)
        }
        guard let scalar = Unicode.Scalar(high) else { throw error("unpaired surrogate in string") }
        return (scalar, 6)
    }

    func hex4(_ raw: UnsafeBufferPointer<UInt8>, at start: Int) throws(JSONSyntaxError) -> UInt32 {
        guard start + 4 <= raw.count else { throw error("invalid \\u escape") }
        var value: UInt32 = 0
        for offset in 0..<4 {
            let byte = raw[start + offset]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error("invalid \\u escape")
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }
}
