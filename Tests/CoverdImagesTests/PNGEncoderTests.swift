@testable import CoverdImages
import CoverdTestSupport
import Testing

/// coverd's own PNG encoder, checked against decoders it does not share code
/// with: libpng (through `PNGDecoder`, its simplified API) and netpbm's
/// `pngtopam`, pixel for pixel, on both of its paths (libdeflate whole, zlib streamed).
@Suite("The PNG encoder")
struct PNGEncoderTests {
    /// Photo-like rows (a smooth walk) with edges and flat runs, so that every filter type wins somewhere.
    static func image(width: Int, height: Int, channels: Int, seed: UInt64 = 7) -> PixelImage {
        var generator = SplitMix(seed: seed)
        var pixels = [UInt8](repeating: 0, count: width * height * channels)
        for y in 0..<height {
            for x in 0..<width {
                for channel in 0..<channels {
                    let at = (y * width + x) * channels + channel
                    switch (y / 8) % 4 {
                    case 0: pixels[at] = UInt8(truncatingIfNeeded: x * 3 + y + channel * 40)  // gradient
                    case 1: pixels[at] = x > 0 ? pixels[at - channels] &+ UInt8(generator.next() % 5) : UInt8(generator.next() & 0xFF)
                    case 2: pixels[at] = UInt8(truncatingIfNeeded: generator.next())  // noise
                    default: pixels[at] = y > 0 ? pixels[at - width * channels] &+ UInt8(generator.next() % 3) : 0
                    }
                    if channels == 4 && channel == 3 { pixels[at] = UInt8(truncatingIfNeeded: (x * 7) ^ y) }  // real transparency
                }
            }
        }
        return PixelImage(width: width, height: height, channels: channels, pixels: pixels)
    }

    /// What libpng's simplified API reads back, in the encoder's own channel layout.
    func libpngDecode(_ png: [UInt8]) throws -> PixelImage {
        try PNGDecoder().decode(png)
    }

    @Test(
        "Given gray, RGB or RGBA pixels, when encoded whole or streamed, then libpng and pngtopam decode exactly those pixels",
        arguments: [1, 3, 4], [false, true])
    func pixelForPixel(channels: Int, streamed: Bool) throws {
        let image = Self.image(width: 97, height: 61, channels: channels)
        // A limit below the filtered size sends the rows through zlib, streamed.
        let encoder = PNGEncoder(compressionLevel: 6, inMemoryLimit: streamed ? 1_000 : 8 << 20)
        let png = try encoder.encode(image, text: [("Source Format", "test")])
        _ = try PNGValidator().validate(png)
        #expect(try libpngDecode(png) == image)
        let independent = try ImageTools().decodePNG(png)
        #expect(independent.channels == channels && independent.pixels == image.pixels)
        #expect(PNGChunks.header(png)?.colorType == PNGEncoder.colorType(channels: channels))
    }

    @Test("Given a tall image streamed through zlib, when encoded, then its many IDAT chunks decode to the same pixels as one")
    func streamedSpansManyChunks() throws {
        let image = Self.image(width: 300, height: 700, channels: 3, seed: 3)
        let whole = try PNGEncoder(compressionLevel: 6).encode(image, text: [])
        let streamed = try PNGEncoder(compressionLevel: 6, inMemoryLimit: 4096).encode(image, text: [])
        #expect(PNGChunks.list(whole).filter { $0.type == "IDAT" }.count == 1)
        #expect(PNGChunks.list(streamed).filter { $0.type == "IDAT" }.count > 1)
        #expect(try libpngDecode(streamed) == image)
        #expect(try libpngDecode(whole) == image)
    }

    @Test("Given every compression level 0 to 9, when encoding, then each decodes exactly, 0 stores, and 9 is no larger than 1",
          arguments: [false, true])
    func everyLevel(streamed: Bool) throws {
        let image = Self.image(width: 64, height: 48, channels: 3, seed: 11)
        var sizes: [Int] = []
        for level in 0...9 {
            let png = try PNGEncoder(compressionLevel: level, inMemoryLimit: streamed ? 500 : 8 << 20).encode(image, text: [])
            #expect(try libpngDecode(png) == image, "level \(level)")
            sizes.append(png.count)
        }
        #expect(sizes[0] > image.pixels.count, "level 0 stores the rows")
        #expect(sizes[9] <= sizes[1])
    }

    @Test("Given 1×1, one-row, one-column and very wide images, when encoded whole or streamed, then they decode exactly",
          arguments: [(1, 1), (1, 40), (40, 1), (90_000, 2)])
    func tinyShapes(width: Int, height: Int) throws {
        for channels in [1, 3, 4] {
            let image = Self.image(width: width, height: height, channels: channels, seed: UInt64(width * 100 + height))
            for limit in [8 << 20, 1] {
                #expect(try libpngDecode(PNGEncoder(compressionLevel: 6, inMemoryLimit: limit).encode(image, text: [])) == image)
            }
        }
    }

    @Test("Given a level zlib refuses, when a zlib stream is made, then it throws encodeFailed and frees what it took")
    func zlibRefusesLevel() {
        #expect(throws: CoverImageError.self) { try ZlibDeflateStream(level: 42) }
    }

    @Test("Given text with a non-Latin-1 character, NUL, or a keyword of no printable character, when encoded, then tEXt holds Latin-1 and an empty keyword is left out")
    func textChunks() throws {
        let png = try PNGEncoder(compressionLevel: 6).encode(
            Self.image(width: 4, height: 4, channels: 1), text: [("Source URL", "https://x.example/é→\u{0}"), ("\u{1}", "dropped")])
        #expect(PNGChunks.texts(png) == ["Source URL": "https://x.example/é??"])
        #expect(PNGChunks.list(png).first { $0.type == "tEXt" }?.data.contains(0xE9) == true, "é is one Latin-1 byte")
    }

    @Test("Given a cancelled conversion, when a JPEG is converted or pixels encoded whole or streamed, then each throws cancelled; a plain PNG is still only validated")
    func cancellation() throws {
        let cancellation = ConversionCancellation()
        cancellation.cancel()
        let image = Self.image(width: 40, height: 30, channels: 3)
        for limit in [8 << 20, 100] {
            #expect(throws: CoverImageError.cancelled) {
                try PNGEncoder(compressionLevel: 6, inMemoryLimit: limit, cancellation: cancellation).encode(image, text: [])
            }
        }
        let tools = ImageTools()
        let jpeg = try tools.run("cjpeg in.ppm > out.jpg", input: ("in.ppm", Raster.pattern(width: 40, height: 30, channels: 3).pam), output: "out.jpg")
        #expect(throws: CoverImageError.cancelled) { try CoverImagePipeline().makePNG(from: jpeg, cancellation: cancellation) }
        let png = try PNGEncoder(compressionLevel: 6).encode(image, text: [])
        #expect(try CoverImagePipeline().makePNG(from: png, cancellation: cancellation).png == png)
        #expect(try CoverImagePipeline().makePNG(from: jpeg, cancellation: ConversionCancellation()).info.width == 40)
    }

    @Test("Given a stop that lands midway, when pixels are encoded whole or streamed or a JPEG decoded, then each throws cancelled")
    func cancellationMidway() throws {
        let image = Self.image(width: 300, height: 700, channels: 3, seed: 9)
        // Whole: looks every 64 rows; streamed: every batch of 290 rows, after the first batch's IDATs went out.
        #expect(throws: CoverImageError.cancelled) {
            try PNGEncoder(compressionLevel: 6, cancellation: ConversionCancellation(cancellingAtLook: 3)).encode(image, text: [])
        }
        #expect(throws: CoverImageError.cancelled) {
            try PNGEncoder(compressionLevel: 6, inMemoryLimit: 4096, cancellation: ConversionCancellation(cancellingAtLook: 2)).encode(image, text: [])
        }
        let tools = ImageTools()
        let jpeg = try tools.run("cjpeg in.ppm > out.jpg", input: ("in.ppm", Raster.pattern(width: 40, height: 300, channels: 3).pam), output: "out.jpg")
        // The decoder looks every 32 rows: the third look is a third of the way down.
        #expect(throws: CoverImageError.cancelled) {
            try CoverImagePipeline().makePNG(from: jpeg, cancellation: ConversionCancellation(cancellingAtLook: 3))
        }
    }

    @Test("Given a picture whose streamed batches start on rows the row above predicts, when encoded whole and streamed, then both hold the same filtered rows")
    func streamedBatchesFilterLikeWhole() throws {
        // 350 RGB pixels a row: batches of 249 rows, and row 249 is in a band where Up wins.
        let image = Self.image(width: 350, height: 600, channels: 3, seed: 13)
        let tools = ImageTools()
        var inflated: [[UInt8]] = []
        for limit in [8 << 20, 4096] {
            let png = try PNGEncoder(compressionLevel: 6, inMemoryLimit: limit).encode(image, text: [])
            let stream = PNGChunks.list(png).filter { $0.type == "IDAT" }.flatMap(\.data)
            inflated.append(try tools.run(
                "python3 -c 'import sys, zlib; sys.stdout.buffer.write(zlib.decompress(open(\"in.z\", \"rb\").read()))' > out.raw",
                input: ("in.z", stream), output: "out.raw"))
        }
        #expect(inflated[0].count == 600 * (350 * 3 + 1))
        // Compared as a Bool: on failure the message names the first difference, not 630,000 bytes.
        let difference = inflated[0].indices.first { $0 >= inflated[1].count || inflated[0][$0] != inflated[1][$0] }
        #expect(difference == nil, "first difference at byte \(difference ?? -1), row \((difference ?? 0) / (350 * 3 + 1))")
    }

    @Test("Given pixels scaled down by max_dimension, gray, RGB or RGBA, when the pipeline encodes them, then libpng decodes exactly the resampler's pixels",
          arguments: [1, 3, 4])
    func scaledPixelForPixel(channels: Int) throws {
        let image = Self.image(width: 180, height: 120, channels: channels, seed: 5)
        let source = try PNGEncoder(compressionLevel: 1).encode(image, text: [])
        let cover = try CoverImagePipeline(output: ImageOutput(maxDimension: 50)).makePNG(from: source)
        var expected = try ImageResampler().scale(image, toWidth: 50, height: 33)
        if expected.channels == 4, expected.isOpaque { expected = expected.droppingAlpha() }
        #expect(cover.info.width == 50 && cover.info.height == 33)
        #expect(try libpngDecode(cover.png) == expected)
    }
}

/// Reproducible noise for test pictures.
private struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
