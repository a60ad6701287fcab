import CoverdImages
import CoverdTestSupport
import Testing

@Suite("PNG validation")
struct PNGValidatorTests {
    let validator = PNGValidator()

    @Test("Given a well-formed PNG, when validated, then its header is returned")
    func good() throws {
        let info = try validator.validate(PNGFixture.make(width: 40, height: 30))
        #expect(info == PNGInfo(width: 40, height: 30, bitDepth: 8, colorType: 2, interlaced: false))
    }

    @Test("Given a PNG cut short anywhere, when validated, then it is refused")
    func truncated() {
        let png = PNGFixture.make(width: 20, height: 20)
        for length in [0, 7, 8, 20, 33, png.count / 2, png.count - 12, png.count - 1] {
            #expect(throws: PNGValidationError.self, "length \(length)") {
                try validator.validate(Array(png.prefix(length)))
            }
        }
    }

    @Test("Given a flipped byte in IDAT, when validated, then the CRC mismatch is named")
    func badCRC() {
        #expect(throws: PNGValidationError.crcMismatch(chunk: "IDAT", offset: 33)) {
            try validator.validate(PNGFixture.withBrokenCRC(PNGFixture.make()))
        }
    }

    @Test("Given an IHDR claiming 100000×100000, when validated, then it is refused as too large before any pixel")
    func oversized() {
        #expect(throws: PNGValidationError.tooLarge(width: 100_000, height: 100_000, reason: "limit 16384 pixels per side")) {
            try validator.validate(PNGFixture.claiming(width: 100_000, height: 100_000))
        }
    }

    @Test("Given 10000×10000 (within the side limit), when validated, then the 50-megapixel limit refuses it")
    func tooManyPixels() {
        #expect(throws: PNGValidationError.tooLarge(width: 10_000, height: 10_000, reason: "limit 50000000 pixels")) {
            try validator.validate(PNGFixture.claiming(width: 10_000, height: 10_000))
        }
    }

    @Test("Given a zero width, an invalid bit depth or a missing IDAT, when validated, then each is refused")
    func malformedHeaders() {
        let zeroWidth = PNGFixture.signature + PNGFixture.chunk("IHDR", [0, 0, 0, 0, 0, 0, 0, 1, 8, 2, 0, 0, 0]) + PNGFixture.chunk("IEND", [])
        let badDepth = PNGFixture.signature + PNGFixture.chunk("IHDR", [0, 0, 0, 1, 0, 0, 0, 1, 3, 2, 0, 0, 0]) + PNGFixture.chunk("IEND", [])
        let noIDAT = PNGFixture.signature + PNGFixture.chunk("IHDR", [0, 0, 0, 1, 0, 0, 0, 1, 8, 2, 0, 0, 0]) + PNGFixture.chunk("IEND", [])
        for bytes in [zeroWidth, badDepth, noIDAT] {
            #expect(throws: PNGValidationError.self) { try validator.validate(bytes) }
        }
    }

    @Test("Given the bytes of other formats, when sniffed, then the kind is named by content")
    func sniffing() {
        #expect(ImageKind(sniffing: PNGFixture.make()) == .png)
        #expect(ImageKind(sniffing: [0xFF, 0xD8, 0xFF, 0xE0, 0, 0x10]) == .jpeg)
        #expect(ImageKind(sniffing: Array("GIF89a....".utf8)) == .gif)
        #expect(ImageKind(sniffing: Array("RIFF\0\0\0\0WEBPVP8 ".utf8)) == .webp)
        #expect(ImageKind(sniffing: Array("<!DOCTYPE html><html>".utf8)) == .html)
        #expect(ImageKind(sniffing: Array("<?xml version=\"1.0\"?><svg xmlns=\"x\"/>".utf8)) == .svg)
        #expect(ImageKind(sniffing: []) == .empty)
        #expect(ImageKind(sniffing: [1, 2, 3]) == .unknown)
    }

    @Test("Given a body, when made into a cover PNG, then only valid PNG passes and other kinds are explained")
    func pipeline() throws {
        let pipeline = CoverImagePipeline()
        let png = PNGFixture.make()
        #expect(try pipeline.makePNG(from: png).png == png)
        #expect(throws: CoverImageError.unsupportedFormat(.bmp)) { try pipeline.makePNG(from: Array("BM".utf8) + [UInt8](repeating: 0, count: 40)) }
        #expect(throws: CoverImageError.decodeFailed(.jpeg, "Premature end of JPEG file")) { try pipeline.makePNG(from: [0xFF, 0xD8, 0xFF, 0xE0]) }
        #expect(throws: CoverImageError.notAnImage(.html)) { try pipeline.makePNG(from: Array("<html></html>".utf8)) }
        #expect(CoverImageError.unsupportedFormat(.bmp).description == "unsupported image format: bmp")
        #expect(CoverImageError.notAnImage(.html).description == "unsupported image format: html (not an image)")
    }

    @Test("Given known inputs, when checksummed, then CRC-32 matches the standard check value")
    func crc() {
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(CRC32.checksum([]) == 0)
        let long = (0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let split = long.withUnsafeBytes { raw in
            CRC32.checksum(UnsafeRawBufferPointer(rebasing: raw[5000...]), continuing: CRC32.checksum(UnsafeRawBufferPointer(rebasing: raw[..<5000])))
        }
        #expect(split == CRC32.checksum(long))
    }

    func png(width: Int, height: Int, colorType: UInt8 = 2, interlace: UInt8 = 0, idat: [UInt8]) -> [UInt8] {
        let header = PNGFixture.bigEndianForTests(UInt32(width)) + PNGFixture.bigEndianForTests(UInt32(height)) + [8, colorType, 0, 0, interlace]
        return PNGFixture.signature + PNGFixture.chunk("IHDR", header) + PNGFixture.chunk("IDAT", idat) + PNGFixture.chunk("IEND", [])
    }

    @Test("Given image data that is not a zlib stream, with every CRC right, when validated, then it is refused")
    func garbageImageData() {
        #expect(throws: PNGValidationError.self) {
            try validator.validate(png(width: 4, height: 4, idat: [1, 2, 3, 4, 5, 6, 7, 8]))
        }
    }

    @Test("Given image data shorter or longer than the header implies, when validated, then it is refused")
    func wrongImageDataLength() {
        let short = PNGFixture.zlibStoredForTests([UInt8](repeating: 0, count: 20 * (1 + 60)))
        let long = PNGFixture.zlibStoredForTests([UInt8](repeating: 0, count: 30 * (1 + 60)))
        #expect(throws: PNGValidationError.structure("image data holds 1220 bytes, the header says 1525")) {
            try validator.validate(png(width: 20, height: 25, idat: short))
        }
        #expect(throws: PNGValidationError.self) { try validator.validate(png(width: 20, height: 25, idat: long)) }
    }

    @Test("Given an Adam7-interlaced image with exactly its seven passes' bytes, when validated, then it passes")
    func interlaced() throws {
        // 3×3 gray: the passes hold 1, 0, 0, 1, 2, 2 and 3 pixels on 1, 0, 0, 1, 1, 2 and 1 rows: 15 bytes with filter bytes.
        let info = try validator.validate(png(width: 3, height: 3, colorType: 0, interlace: 1, idat: PNGFixture.zlibStoredForTests([UInt8](repeating: 0, count: 15))))
        #expect(info.interlaced)
        #expect(throws: PNGValidationError.self) {
            try validator.validate(png(width: 3, height: 3, colorType: 0, interlace: 1, idat: PNGFixture.zlibStoredForTests([UInt8](repeating: 0, count: 12))))
        }
    }

    /// RGB rows of zeros (changed first by `editRows`) as a stored zlib stream
    /// (then changed by `edit`), in IDAT chunks of at most `piece` bytes.
    func rgb(
        width: Int, height: Int, rows: Int? = nil, piece: Int = .max,
        edit: (inout [UInt8]) -> Void = { _ in }, editRows: (inout [UInt8]) -> Void = { _ in }
    ) -> [UInt8] {
        var data = [UInt8](repeating: 0, count: (rows ?? height) * (1 + 3 * width))
        editRows(&data)
        var stream = PNGFixture.zlibStoredForTests(data)
        edit(&stream)
        let header = PNGFixture.bigEndianForTests(UInt32(width)) + PNGFixture.bigEndianForTests(UInt32(height)) + [8, 2, 0, 0, 0]
        var bytes = PNGFixture.signature + PNGFixture.chunk("IHDR", header)
        for start in stride(from: 0, to: stream.count, by: min(piece, stream.count)) {
            bytes += PNGFixture.chunk("IDAT", Array(stream[start..<min(start + piece, stream.count)]))
        }
        return bytes + PNGFixture.chunk("IEND", [])
    }

    /// 200×200 is inflated in memory; 1,500×2,000 (9,002,000 bytes of rows) through zlib's scratch buffer.
    static let sizes = [(200, 200), (1_500, 2_000)]

    @Test("Given image data whose zlib stream ends cleanly after half the rows, with every CRC right, when validated, then it is refused",
          arguments: sizes)
    func cleanlyEndedButShort(width: Int, height: Int) throws {
        let rowBytes = 1 + 3 * width
        #expect(throws: PNGValidationError.structure("image data holds \(height / 2 * rowBytes) bytes, the header says \(height * rowBytes)")) {
            try validator.validate(rgb(width: width, height: height, rows: height / 2))
        }
        #expect(try validator.validate(rgb(width: width, height: height)).width == width, "and whole, it passes")
    }

    @Test("Given image data whose Adler-32 is wrong, with every CRC right, when validated, then it is refused", arguments: sizes)
    func wrongAdler(width: Int, height: Int) {
        #expect(throws: PNGValidationError.structure("image data fails its Adler-32 checksum")) {
            try validator.validate(rgb(width: width, height: height) { $0[$0.count - 1] ^= 1 })
        }
    }

    @Test("Given corrupt deflate data, or bytes after the stream's end, with every CRC right, when validated, then each is refused",
          arguments: sizes)
    func corruptOrTrailingData(width: Int, height: Int) {
        // The first stored block's length no longer matches its complement.
        #expect(throws: PNGValidationError.self) { try validator.validate(rgb(width: width, height: height) { $0[3] ^= 0xFF }) }
        #expect(throws: PNGValidationError.structure("image data continues after the end of its zlib stream")) {
            try validator.validate(rgb(width: width, height: height) { $0.append(0) })
        }
    }

    @Test("Given the Adler-32 in an IDAT chunk of its own after an empty one, when validated, then it passes; with the checksum cut short, it is refused",
          arguments: sizes)
    func trailerInItsOwnChunk(width: Int, height: Int) throws {
        let stream = PNGFixture.zlibStoredForTests([UInt8](repeating: 0, count: height * (1 + 3 * width)))
        let header = PNGFixture.bigEndianForTests(UInt32(width)) + PNGFixture.bigEndianForTests(UInt32(height)) + [8, 2, 0, 0, 0]
        func png(_ pieces: [ArraySlice<UInt8>]) -> [UInt8] {
            PNGFixture.signature + PNGFixture.chunk("IHDR", header) + pieces.flatMap { PNGFixture.chunk("IDAT", Array($0)) }
                + PNGFixture.chunk("IEND", [])
        }
        let end = stream.count - 4
        #expect(try validator.validate(png([stream[..<end], [], stream[end...]])).width == width)
        #expect(throws: PNGValidationError.structure("image data lacks its zlib checksum")) {
            try validator.validate(png([stream[..<end], stream[end..<stream.count - 2]]))
        }
    }

    @Test("Given rows whose filter-type bytes are each of 0 to 4, when validated, then it passes", arguments: sizes)
    func everyFilterType(width: Int, height: Int) throws {
        let stride = 1 + 3 * width
        let png = rgb(width: width, height: height, editRows: { rows in
            for row in 0..<height { rows[row * stride] = UInt8(row % 5) }
        })
        #expect(try validator.validate(png).height == height)
    }

    @Test("Given a row whose filter-type byte is not 0 to 4, with every CRC and the Adler-32 right, when validated, then it is refused naming the row",
          arguments: sizes)
    func invalidFilterType(width: Int, height: Int) {
        let stride = 1 + 3 * width
        // The first row, the last, and (for the larger image) one lying past zlib's first 64 KiB of output.
        for row in [0, height - 1, 65_536 / stride + 1] {
            #expect(throws: PNGValidationError.structure("scanline \(row + 1) of \(height) has filter type 5 (PNG allows 0 to 4)")) {
                try validator.validate(rgb(width: width, height: height, editRows: { $0[row * stride] = 5 }))
            }
        }
    }

    @Test("Given an Adam7-interlaced image whose last pass has a row with filter type 255, when validated, then it is refused")
    func invalidFilterTypeInLastPass() {
        // 3×3 gray: 15 bytes in 6 scanlines; the seventh pass's one row begins at byte 11.
        var rows = [UInt8](repeating: 0, count: 15)
        rows[11] = 255
        #expect(throws: PNGValidationError.structure("scanline 6 of 6 has filter type 255 (PNG allows 0 to 4)")) {
            try validator.validate(png(width: 3, height: 3, colorType: 0, interlace: 1, idat: PNGFixture.zlibStoredForTests(rows)))
        }
        rows[11] = 4
        #expect(throws: Never.self) {
            try validator.validate(png(width: 3, height: 3, colorType: 0, interlace: 1, idat: PNGFixture.zlibStoredForTests(rows)))
        }
    }

    @Test("Given image data split over many IDAT chunks, the zlib header itself split, when validated, then it passes whole and is refused cut")
    func splitImageData() throws {
        #expect(try validator.validate(rgb(width: 200, height: 200, piece: 1)).height == 200)
        #expect(try validator.validate(rgb(width: 200, height: 200, piece: 8_192)).height == 200)
        #expect(throws: PNGValidationError.structure("image data holds 60100 bytes, the header says 120200")) {
            try validator.validate(rgb(width: 200, height: 200, rows: 100, piece: 8_192))
        }
    }
}
