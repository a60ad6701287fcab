/// What a downloaded body is, decided by its first bytes and never by Content-Type.
public enum ImageKind: String, Sendable, Equatable {
    case png, jpeg, gif, webp, bmp, tiff, ico, avif, heic, jpegXL = "jpeg-xl", svg
    case html, empty, unknown

    /// True for the raster and vector image formats; HTML, empty and unknown bodies are "not an image".
    public var isImage: Bool {
        switch self {
        case .html, .empty, .unknown: return false
        default: return true
        }
    }

    public init(sniffing bytes: UnsafeRawBufferPointer) {
        func starts(_ prefix: [UInt8], at offset: Int = 0) -> Bool {
            guard bytes.count >= offset + prefix.count else { return false }
            for (index, byte) in prefix.enumerated() where bytes[offset + index] != byte { return false }
            return true
        }
        if bytes.isEmpty { self = .empty; return }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { self = .png; return }
        if starts([0xFF, 0xD8, 0xFF]) { self = .jpeg; return }
        if starts(Array("GIF87a".utf8)) || starts(Array("GIF89a".utf8)) { self = .gif; return }
        if starts(Array("RIFF".utf8)) && starts(Array("WEBP".utf8), at: 8) { self = .webp; return }
        if starts(Array("BM".utf8)) && bytes.count >= 26 { self = .bmp; return }
        if starts([0x49, 0x49, 0x2A, 0x00]) || starts([0x4D, 0x4D, 0x00, 0x2A]) { self = .tiff; return }
        if starts([0x00, 0x00, 0x01, 0x00]) { self = .ico; return }
        if starts([0xFF, 0x0A]) || starts([0x00, 0x00, 0x00, 0x0C, 0x4A, 0x58, 0x4C, 0x20]) { self = .jpegXL; return }
        if starts(Array("ftyp".utf8), at: 4) {
            if starts(Array("avif".utf8), at: 8) || starts(Array("avis".utf8), at: 8) { self = .avif; return }
            if starts(Array("heic".utf8), at: 8) || starts(Array("heix".utf8), at: 8) || starts(Array("mif1".utf8), at: 8) {
                self = .heic
                return
            }
        }
        self = ImageKind.sniffText(bytes)
    }

    public init(sniffing bytes: [UInt8]) {
        self = bytes.withUnsafeBytes { ImageKind(sniffing: $0) }
    }

    /// Markup: SVG if an `<svg` element appears near the start, HTML for other markup.
    private static func sniffText(_ bytes: UnsafeRawBufferPointer) -> ImageKind {
        let head = String(decoding: bytes.prefix(1024), as: UTF8.self).lowercased()
        let trimmed = head.drop(while: { $0.isWhitespace || $0 == "\u{FEFF}" })
        guard trimmed.hasPrefix("<") else { return .unknown }
        if head.contains("<svg") { return .svg }
        return .html
    }
}
