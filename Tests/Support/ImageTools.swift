import Foundation

/// 8-bit pixels as netpbm writes them: the tests' common ground between
/// coverd's PNGs and the independent tools' reference decodes.
public struct Raster: Equatable, Sendable {
    public var width: Int
    public var height: Int
    /// 1 gray, 2 gray+alpha, 3 RGB, 4 RGBA.
    public var channels: Int
    public var pixels: [UInt8]

    public init(width: Int, height: Int, channels: Int, pixels: [UInt8]) {
        precondition(pixels.count == width * height * channels)
        (self.width, self.height, self.channels, self.pixels) = (width, height, channels, pixels)
    }

    /// A test picture: smooth gradients with a little structure, the kind of
    /// content every codec handles well, so differences measure the converter.
    public static func pattern(width: Int, height: Int, channels: Int, seed: Int = 1) -> Raster {
        var pixels: [UInt8] = []
        pixels.reserveCapacity(width * height * channels)
        for y in 0..<height {
            for x in 0..<width {
                let r = (x * 255) / max(1, width - 1), g = (y * 255) / max(1, height - 1)
                let b = (((x / 8 + y / 8 + seed) % 2) == 0) ? 200 : 60
                switch channels {
                case 1: pixels.append(UInt8((r + g) / 2))
                case 3: pixels += [UInt8(r), UInt8(g), UInt8(b)]
                default: pixels += [UInt8(r), UInt8(g), UInt8(b), UInt8(min(255, 40 + (x + y) * 3))]
                }
            }
        }
        return Raster(width: width, height: height, channels: channels, pixels: pixels)
    }

    /// A picture of at most 216 colours (a GIF palette), transparent in the
    /// top-left `transparentCorner`² square when that is not zero.
    public static func palette(width: Int, height: Int, transparentCorner: Int = 0) -> Raster {
        var pixels: [UInt8] = []
        for y in 0..<height {
            for x in 0..<width {
                pixels += [UInt8((x % 6) * 51), UInt8((y % 6) * 51), UInt8(((x + y) % 6) * 51)]
                if transparentCorner > 0 { pixels.append(x < transparentCorner && y < transparentCorner ? 0 : 255) }
            }
        }
        return Raster(width: width, height: height, channels: transparentCorner > 0 ? 4 : 3, pixels: pixels)
    }

    /// Netpbm PAM (P7) bytes, which cjpeg, cwebp, pamtogif and ImageMagick all read.
    public var pam: [UInt8] {
        let type = ["GRAYSCALE", "GRAYSCALE_ALPHA", "RGB", "RGB_ALPHA"][channels - 1]
        if channels == 1 { return Array("P5\n\(width) \(height)\n255\n".utf8) + pixels }
        if channels == 3 { return Array("P6\n\(width) \(height)\n255\n".utf8) + pixels }
        return Array("P7\nWIDTH \(width)\nHEIGHT \(height)\nDEPTH \(channels)\nMAXVAL 255\nTUPLTYPE \(type)\nENDHDR\n".utf8) + pixels
    }

    /// Reads P5, P6 and P7 at maxval 255.
    public init(netpbm bytes: [UInt8]) throws {
        var offset = 0
        func token() -> String {
            while offset < bytes.count {
                if bytes[offset] == UInt8(ascii: "#") {
                    while offset < bytes.count, bytes[offset] != 10 { offset += 1 }
                } else if [9, 10, 13, 32].contains(bytes[offset]) {
                    offset += 1
                } else {
                    break
                }
            }
            let start = offset
            while offset < bytes.count, ![9, 10, 13, 32].contains(bytes[offset]) { offset += 1 }
            return String(decoding: bytes[start..<offset], as: UTF8.self)
        }
        let magic = token()
        var width = 0, height = 0, depth = 0, maxval = 0
        switch magic {
        case "P5", "P6":
            (width, height, maxval) = (Int(token()) ?? 0, Int(token()) ?? 0, Int(token()) ?? 0)
            depth = magic == "P5" ? 1 : 3
        case "P7":
            while offset < bytes.count {
                let key = token()
                if key == "ENDHDR" { break }
                let value = token()
                switch key {
                case "WIDTH": width = Int(value) ?? 0
                case "HEIGHT": height = Int(value) ?? 0
                case "DEPTH": depth = Int(value) ?? 0
                case "MAXVAL": maxval = Int(value) ?? 0
                default: break
                }
            }
        default:
            throw ToolError(message: "not a netpbm image (\(magic.prefix(8)))")
        }
        offset += 1  // the single whitespace after the header
        let count = width * height * depth
        guard maxval == 255, depth >= 1, depth <= 4, bytes.count - offset >= count else {
            throw ToolError(message: "unexpected netpbm image \(magic) \(width)×\(height)×\(depth) maxval \(maxval)")
        }
        self.init(width: width, height: height, channels: depth, pixels: Array(bytes[offset..<(offset + count)]))
    }

    /// The colour channels only (gray stays gray), for comparing images whose alpha is checked apart.
    public var withoutAlpha: Raster {
        guard channels == 2 || channels == 4 else { return self }
        let kept = channels - 1
        var out: [UInt8] = []
        out.reserveCapacity(width * height * kept)
        for index in 0..<(width * height) { out += pixels[(index * channels)..<(index * channels + kept)] }
        return Raster(width: width, height: height, channels: kept, pixels: out)
    }

    /// Mean absolute difference per sample; infinity when the shapes differ.
    public func meanDifference(from other: Raster) -> Double {
        guard width == other.width, height == other.height, channels == other.channels else { return .infinity }
        var total = 0
        for index in pixels.indices { total += abs(Int(pixels[index]) - Int(other.pixels[index])) }
        return Double(total) / Double(max(1, pixels.count))
    }
}

/// Runs the independent image tools (libjpeg-turbo-progs, webp, netpbm,
/// ImageMagick) through the shell in a scratch directory.
public struct ImageTools {
    /// Kept here so the directory lives as long as the tools that use it.
    public let scratch: TestDirectory
    public var directory: String { scratch.path }

    public init(scratch: TestDirectory = TestDirectory("coverd-images")) { self.scratch = scratch }

    /// Writes `input` to `name`, runs `command` there and returns `output`'s bytes.
    @discardableResult
    public func run(_ command: String, input: (name: String, bytes: [UInt8])? = nil, output: String) throws -> [UInt8] {
        if let input { try Data(input.bytes).write(to: URL(fileURLWithPath: directory + "/" + input.name)) }
        try? FileManager.default.removeItem(atPath: directory + "/" + output)
        let result = try runCommand("/bin/sh", ["-c", "cd '\(directory)' && \(command)"])
        guard result.status == 0, let bytes = FileManager.default.contents(atPath: directory + "/" + output) else {
            throw ToolError(message: "`\(command)` failed (\(result.status)): \(result.stderr)")
        }
        return [UInt8](bytes)
    }

    /// An independent decode of a PNG (netpbm's pngtopam), with an alpha channel only when the PNG has one.
    public func decodePNG(_ png: [UInt8]) throws -> Raster {
        let alpha = [4, 6].contains(PNGChunks.header(png)?.colorType ?? 0) || PNGChunks.list(png).contains { $0.type == "tRNS" }
        return try Raster(netpbm: run("pngtopam \(alpha ? "-alphapam" : "") in.png > out.pam", input: ("in.png", png), output: "out.pam"))
    }
}

/// Reads a PNG's chunks, for the tests' checks of what coverd wrote.
public enum PNGChunks {
    /// (type, data) in file order; stops at the first malformed length.
    public static func list(_ png: [UInt8]) -> [(type: String, data: [UInt8])] {
        var chunks: [(String, [UInt8])] = []
        var offset = 8
        while offset + 12 <= png.count {
            let length = png[offset..<(offset + 4)].reduce(0) { $0 << 8 | Int($1) }
            guard offset + 12 + length <= png.count else { break }
            let type = String(decoding: png[(offset + 4)..<(offset + 8)], as: UTF8.self)
            chunks.append((type, Array(png[(offset + 8)..<(offset + 8 + length)])))
            offset += 12 + length
        }
        return chunks
    }

    /// tEXt keyword → text (Latin-1).
    public static func texts(_ png: [UInt8]) -> [String: String] {
        var texts: [String: String] = [:]
        for chunk in list(png) where chunk.type == "tEXt" {
            guard let nul = chunk.data.firstIndex(of: 0) else { continue }
            let key = String(decoding: chunk.data[..<nul], as: UTF8.self)
            texts[key] = String(chunk.data[(nul + 1)...].map { Character(Unicode.Scalar($0)) })
        }
        return texts
    }

    /// IHDR's width, height, bit depth and colour type.
    public static func header(_ png: [UInt8]) -> (width: Int, height: Int, bitDepth: Int, colorType: Int)? {
        guard let ihdr = list(png).first, ihdr.type == "IHDR", ihdr.data.count == 13 else { return nil }
        let width = ihdr.data[0..<4].reduce(0) { $0 << 8 | Int($1) }, height = ihdr.data[4..<8].reduce(0) { $0 << 8 | Int($1) }
        return (width, height, Int(ihdr.data[8]), Int(ihdr.data[9]))
    }
}

/// Byte surgery on files the tools made: the hostile variants no tool would write.
public enum ImageSurgery {
    /// A JPEG with an Exif APP1 segment carrying `orientation`, right after SOI
    /// (after an XMP APP1 segment when `xmpFirst`, as some editors write them).
    public static func jpeg(_ jpeg: [UInt8], orientation: Int, littleEndian: Bool = false, xmpFirst: Bool = false) -> [UInt8] {
        // TIFF: header, one IFD with one entry (0x0112, SHORT, 1, value), no next IFD.
        let tiff: [UInt8] = littleEndian
            ? [0x49, 0x49, 42, 0, 8, 0, 0, 0, 1, 0, 0x12, 0x01, 3, 0, 1, 0, 0, 0, UInt8(orientation), 0, 0, 0, 0, 0, 0, 0]
            : [0x4D, 0x4D, 0, 42, 0, 0, 0, 8, 0, 1, 0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, UInt8(orientation), 0, 0, 0, 0, 0, 0]
        func app1(_ payload: [UInt8]) -> [UInt8] {
            let length = payload.count + 2
            return [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
        }
        let xmp = xmpFirst ? app1(Array("http://ns.adobe.com/xap/1.0/\u{0}<x:xmpmeta/>".utf8)) : []
        return [0xFF, 0xD8] + xmp + app1(Array("Exif".utf8) + [0, 0] + tiff) + jpeg.dropFirst(2)
    }

    /// The JPEG's frame header (SOFn) patched to claim `width`×`height`.
    public static func jpeg(_ jpeg: [UInt8], claimingWidth width: Int, height: Int) -> [UInt8] {
        var bytes = jpeg
        var offset = 2
        while offset + 9 < bytes.count, bytes[offset] == 0xFF {
            let marker = bytes[offset + 1], length = Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            if (0xC0...0xCF).contains(marker), ![0xC4, 0xC8, 0xCC].contains(marker) {
                bytes[offset + 5] = UInt8(height >> 8); bytes[offset + 6] = UInt8(height & 0xFF)
                bytes[offset + 7] = UInt8(width >> 8); bytes[offset + 8] = UInt8(width & 0xFF)
                return bytes
            }
            offset += 2 + length
        }
        return bytes
    }

    /// The GIF's logical screen patched to claim `width`×`height`.
    public static func gif(_ gif: [UInt8], claimingWidth width: Int, height: Int) -> [UInt8] {
        var bytes = gif
        bytes[6] = UInt8(width & 0xFF); bytes[7] = UInt8(width >> 8)
        bytes[8] = UInt8(height & 0xFF); bytes[9] = UInt8(height >> 8)
        return bytes
    }

    /// The GIF's first image descriptor patched to `left`, `top`, `width`×`height` (nil keeps a field).
    public static func gif(_ gif: [UInt8], frameLeft left: Int, top: Int, width: Int? = nil, height: Int? = nil) -> [UInt8] {
        var bytes = gif
        var offset = 13 + (bytes[10] & 0x80 != 0 ? 3 << (Int(bytes[10] & 7) + 1) : 0)
        while offset < bytes.count, bytes[offset] == 0x21 {  // extensions: introducer, label, sub-blocks
            offset += 2
            while offset < bytes.count, bytes[offset] != 0 { offset += Int(bytes[offset]) + 1 }
            offset += 1
        }
        precondition(offset + 9 < bytes.count && bytes[offset] == 0x2C, "no image descriptor")
        func put(_ value: Int?, at index: Int) {
            guard let value else { return }
            bytes[index] = UInt8(value & 0xFF); bytes[index + 1] = UInt8(value >> 8)
        }
        put(left, at: offset + 1); put(top, at: offset + 3); put(width, at: offset + 5); put(height, at: offset + 7)
        return bytes
    }

    /// A simple lossy WebP ("VP8 " chunk first) whose key-frame header claims `width`×`height` (at most 16383 each).
    public static func webp(_ webp: [UInt8], claimingWidth width: Int, height: Int) -> [UInt8] {
        var bytes = webp
        precondition(String(decoding: bytes[12..<16], as: UTF8.self) == "VP8 " && bytes[23...25] == [0x9D, 0x01, 0x2A])
        bytes[26] = UInt8(width & 0xFF); bytes[27] = UInt8(width >> 8 & 0x3F)
        bytes[28] = UInt8(height & 0xFF); bytes[29] = UInt8(height >> 8 & 0x3F)
        return bytes
    }
}
