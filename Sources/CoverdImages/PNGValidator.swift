/// What the IHDR chunk of a valid PNG says.
public struct PNGInfo: Sendable, Equatable {
    public var width: Int
    public var height: Int
    public var bitDepth: Int
    public var colorType: Int
    public var interlaced: Bool

    public init(width: Int, height: Int, bitDepth: Int, colorType: Int, interlaced: Bool) {
        self.width = width
        self.height = height
        self.bitDepth = bitDepth
        self.colorType = colorType
        self.interlaced = interlaced
    }
}

/// Why bytes are not a PNG coverd will store.
public enum PNGValidationError: Error, Sendable, Equatable, CustomStringConvertible {
    case notPNG
    case truncated(offset: Int)
    case invalidChunk(offset: Int, reason: String)
    case crcMismatch(chunk: String, offset: Int)
    case invalidHeader(String)
    case tooLarge(width: Int, height: Int, reason: String)
    case structure(String)

    public var description: String {
        switch self {
        case .notPNG: return "not a PNG (bad signature)"
        case .truncated(let offset): return "truncated PNG (ends at byte \(offset) before IEND)"
        case .invalidChunk(let offset, let reason): return "invalid PNG chunk at byte \(offset): \(reason)"
        case .crcMismatch(let chunk, let offset): return "bad CRC in \(chunk) chunk at byte \(offset)"
        case .invalidHeader(let reason): return "invalid PNG header: \(reason)"
        case .tooLarge(let width, let height, let reason): return "image is too large (\(width)×\(height); \(reason))"
        case .structure(let reason): return "invalid PNG: \(reason)"
        }
    }
}

/// Checks that bytes are a complete, well-formed PNG within the size limits:
/// signature, IHDR first and sane, every chunk's CRC, critical chunk order,
/// image data that inflates whole to exactly the size the header implies,
/// every scanline with a valid filter type, with its checksum
/// (`PNGImageData`), and IEND. Bytes after IEND are
/// tolerated, as browsers and libpng do.
public struct PNGValidator: Sendable {
    public var limits: ImageLimits
    /// The memory its in-memory inflates share with the other validators given the same one.
    package let inflateMemory: InflateMemory

    /// A validator with memory of its own for inflating (for one check at a time).
    public init(limits: ImageLimits = ImageLimits()) {
        self.init(limits: limits, inflateMemory: InflateMemory())
    }

    package init(limits: ImageLimits, inflateMemory: InflateMemory) {
        self.limits = limits
        self.inflateMemory = inflateMemory
    }

    public func validate(_ bytes: [UInt8]) throws(PNGValidationError) -> PNGInfo {
        let result: Result<PNGInfo, PNGValidationError> = bytes.withUnsafeBytes { buffer in
            do throws(PNGValidationError) { return .success(try validate(buffer)) } catch { return .failure(error) }
        }
        return try result.get()
    }

    public func validate(_ bytes: UnsafeRawBufferPointer) throws(PNGValidationError) -> PNGInfo {
        let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        guard bytes.count >= 8, signature.indices.allSatisfy({ bytes[$0] == signature[$0] }) else { throw .notPNG }
        var offset = 8
        var info: PNGInfo?
        var compressed: [UnsafeRawBufferPointer] = []
        var sawPalette = false
        var idatState = 0  // 0 none yet, 1 in the IDAT run, 2 after it
        while true {
            guard offset + 8 <= bytes.count else { throw .truncated(offset: bytes.count) }
            let length = Int(readUInt32(bytes, offset))
            let type = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[offset + 4..<offset + 8]), as: UTF8.self)
            guard length <= 0x7FFF_FFFF else { throw .invalidChunk(offset: offset, reason: "length \(length) exceeds 2^31-1") }
            guard (4..<8).allSatisfy({ isLetter(bytes[offset + $0]) }) else {
                throw .invalidChunk(offset: offset, reason: "chunk type is not four letters")
            }
            guard bytes.count - offset - 12 >= length else { throw .truncated(offset: bytes.count) }
            let data = UnsafeRawBufferPointer(rebasing: bytes[offset + 8..<offset + 8 + length])
            let stored = readUInt32(bytes, offset + 8 + length)
            let computed = CRC32.checksum(UnsafeRawBufferPointer(rebasing: bytes[offset + 4..<offset + 8 + length]))
            guard stored == computed else { throw .crcMismatch(chunk: type, offset: offset) }

            if info == nil && type != "IHDR" { throw .structure("the first chunk is \(type), not IHDR") }
            if idatState == 1 && type != "IDAT" { idatState = 2 }
            switch type {
            case "IHDR":
                guard info == nil else { throw .structure("more than one IHDR chunk") }
                info = try header(data)
            case "PLTE":
                guard idatState == 0, !sawPalette else { throw .structure("PLTE chunk out of order") }
                guard length % 3 == 0, length > 0, length <= 768 else { throw .structure("PLTE chunk has \(length) bytes") }
                guard info?.colorType != 0, info?.colorType != 4 else { throw .structure("PLTE chunk in a grayscale image") }
                sawPalette = true
            case "IDAT":
                guard idatState != 2 else { throw .structure("IDAT chunks are not consecutive") }
                if info?.colorType == 3 && !sawPalette { throw .structure("palette image without a PLTE chunk") }
                idatState = 1
                compressed.append(data)
            case "IEND":
                guard idatState != 0 else { throw .structure("no IDAT chunk") }
                guard length == 0 else { throw .structure("IEND chunk is not empty") }
                guard let info else { throw .structure("no IHDR chunk") }
                try PNGImageData.check(compressed, info: info, memory: inflateMemory)
                return info
            default:
                // Ancillary chunks have a lower-case first letter; an unknown critical one cannot be decoded.
                if isUpper(bytes[offset + 4]) { throw .structure("unknown critical chunk \(type)") }
            }
            offset += 12 + length
        }
    }

    /// The size IHDR declares, read without validating anything else (nil if the bytes do not start with IHDR).
    static func declaredSize(_ bytes: [UInt8]) -> (width: Int, height: Int)? {
        guard bytes.count >= 24, bytes[12..<16].elementsEqual("IHDR".utf8) else { return nil }
        let width = bytes[16..<20].reduce(0) { $0 << 8 | Int($1) }, height = bytes[20..<24].reduce(0) { $0 << 8 | Int($1) }
        return (width, height)
    }

    private func header(_ data: UnsafeRawBufferPointer) throws(PNGValidationError) -> PNGInfo {
        guard data.count == 13 else { throw .invalidHeader("IHDR has \(data.count) bytes, not 13") }
        let width = Int(readUInt32(data, 0))
        let height = Int(readUInt32(data, 4))
        let depth = Int(data[8])
        let colorType = Int(data[9])
        guard width > 0, height > 0, width <= 0x7FFF_FFFF, height <= 0x7FFF_FFFF else {
            throw .invalidHeader("dimensions \(width)×\(height)")
        }
        if let reason = limits.violation(width: width, height: height) {
            throw .tooLarge(width: width, height: height, reason: reason)
        }
        let allowed: [Int: Set<Int>] = [0: [1, 2, 4, 8, 16], 2: [8, 16], 3: [1, 2, 4, 8], 4: [8, 16], 6: [8, 16]]
        guard let depths = allowed[colorType] else { throw .invalidHeader("color type \(colorType)") }
        guard depths.contains(depth) else { throw .invalidHeader("bit depth \(depth) with color type \(colorType)") }
        guard data[10] == 0 else { throw .invalidHeader("compression method \(data[10])") }
        guard data[11] == 0 else { throw .invalidHeader("filter method \(data[11])") }
        guard data[12] <= 1 else { throw .invalidHeader("interlace method \(data[12])") }
        return PNGInfo(width: width, height: height, bitDepth: depth, colorType: colorType, interlaced: data[12] == 1)
    }

    private func readUInt32(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> UInt32 {
        UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8 | UInt32(bytes[offset + 3])
    }

    private func isLetter(_ byte: UInt8) -> Bool { isUpper(byte) || (byte >= 0x61 && byte <= 0x7A) }
    private func isUpper(_ byte: UInt8) -> Bool { byte >= 0x41 && byte <= 0x5A }
}
