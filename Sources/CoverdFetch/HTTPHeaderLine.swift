/// One response header line as libcurl hands it over, recognised straight
/// from its bytes: no string is made for the headers coverd ignores, which
/// are most of them on every one of thousands of responses.
enum HTTPHeaderLine: Equatable {
    case status(code: Int, reason: String)
    case retryAfter(String)
    case contentLength(Int?)
    case etag(String)
    case lastModified(String)
    case other

    init(_ line: UnsafeRawBufferPointer) {
        var end = line.count
        while end > 0, line[end - 1] == 0x0D || line[end - 1] == 0x0A || line[end - 1] == 0x20 || line[end - 1] == 0x09 { end -= 1 }
        let bytes = UnsafeRawBufferPointer(rebasing: line[..<end])
        if HTTPHeaderLine.hasPrefix(bytes, "HTTP/") {
            self = HTTPHeaderLine.statusLine(bytes)
            return
        }
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else {
            self = .other
            return
        }
        var start = colon + 1
        while start < bytes.count, bytes[start] == 0x20 || bytes[start] == 0x09 { start += 1 }
        let name = UnsafeRawBufferPointer(rebasing: bytes[..<colon])
        let value = UnsafeRawBufferPointer(rebasing: bytes[start...])
        if HTTPHeaderLine.equalsIgnoringCase(name, "retry-after") {
            self = .retryAfter(String(decoding: value, as: UTF8.self))
        } else if HTTPHeaderLine.equalsIgnoringCase(name, "content-length") {
            self = .contentLength(HTTPHeaderLine.decimal(value))
        } else if HTTPHeaderLine.equalsIgnoringCase(name, "etag") {
            self = HTTPHeaderLine.validator(value).map(HTTPHeaderLine.etag) ?? .other
        } else if HTTPHeaderLine.equalsIgnoringCase(name, "last-modified") {
            self = HTTPHeaderLine.validator(value).map(HTTPHeaderLine.lastModified) ?? .other
        } else {
            self = .other
        }
    }

    /// `HTTP/1.1 404 Not Found` → code 404, reason "Not Found".
    private static func statusLine(_ bytes: UnsafeRawBufferPointer) -> HTTPHeaderLine {
        guard let space = bytes.firstIndex(of: 0x20) else { return .status(code: 0, reason: "") }
        var index = space + 1
        var code = 0
        while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39, code < 1000 {
            code = code * 10 + Int(bytes[index] - 0x30)
            index += 1
        }
        while index < bytes.count, bytes[index] == 0x20 { index += 1 }
        return .status(code: code, reason: String(decoding: UnsafeRawBufferPointer(rebasing: bytes[index...]), as: UTF8.self))
    }

    /// A validator worth sending back: printable ASCII, at most 256 bytes;
    /// anything else (a hostile server's megabyte, a line break) is dropped,
    /// and the cover is then downloaded again when outdated.
    static func validator(_ bytes: UnsafeRawBufferPointer) -> String? {
        guard !bytes.isEmpty, bytes.count <= 256, bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// A non-negative decimal that fits an Int, or nil.
    static func decimal(_ bytes: UnsafeRawBufferPointer) -> Int? {
        guard !bytes.isEmpty, bytes.count <= 18 else { return nil }
        var value = 0
        for byte in bytes {
            guard byte >= 0x30, byte <= 0x39 else { return nil }
            value = value * 10 + Int(byte - 0x30)
        }
        return value
    }

    private static func hasPrefix(_ bytes: UnsafeRawBufferPointer, _ prefix: StaticString) -> Bool {
        guard bytes.count >= prefix.utf8CodeUnitCount else { return false }
        return prefix.withUTF8Buffer { expected in (0..<expected.count).allSatisfy { bytes[$0] == expected[$0] } }
    }

    /// ASCII case-insensitive comparison with a lower-case name.
    private static func equalsIgnoringCase(_ bytes: UnsafeRawBufferPointer, _ name: StaticString) -> Bool {
        guard bytes.count == name.utf8CodeUnitCount else { return false }
        return name.withUTF8Buffer { expected in
            (0..<expected.count).allSatisfy { index in
                let byte = bytes[index]
                return (byte >= 0x41 && byte <= 0x5A ? byte + 0x20 : byte) == expected[index]
            }
        }
    }
}
