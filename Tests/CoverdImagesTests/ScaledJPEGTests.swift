@testable import CoverdImages
import CoverdTestSupport
import Testing

/// A JPEG scaled down by max_dimension, checked against the route it used to
/// take: packed pixels at libjpeg's DCT scale (djpeg's decode, which coverd's
/// packed decode matches), repacked and scaled by the resampler, then oriented.
@Suite("Scaled JPEGs")
struct ScaledJPEGTests {
    static let maxDimension = 100

    /// The old route for a `width`×`height` JPEG (as stored) shown turned by `orientation`.
    static func oldRoute(
        _ jpeg: [UInt8], width: Int, height: Int, orientation: Int = 1, maxDimension: Int, tools: ImageTools
    ) throws -> PixelImage {
        let shown = orientation >= 5 ? (height, width) : (width, height)
        let target = ImageResampler.fitting(width: shown.0, height: shown.1, maxDimension: maxDimension)
        let eighths = JPEGDecoder.eighths(width: width, height: height, orientation: orientation, fitting: target)
        let packed = try Raster(netpbm: tools.run("djpeg -scale \(eighths)/8 -pnm in.jpg > ref.pnm", input: ("in.jpg", jpeg), output: "ref.pnm"))
        let stored = orientation >= 5 ? (target.height, target.width) : (target.width, target.height)
        let image = PixelImage(width: packed.width, height: packed.height, channels: packed.channels, pixels: packed.pixels)
        return try ImageResampler().scale(image, toWidth: stored.0, height: stored.1).oriented(orientation)
    }

    /// The pipeline's PNG for `jpeg` scaled to fit `maxDimension`, as libpng reads it back.
    static func converted(_ jpeg: [UInt8], maxDimension: Int) throws -> PixelImage {
        let cover = try CoverImagePipeline(output: ImageOutput(maxDimension: maxDimension)).makePNG(from: jpeg)
        return try PNGDecoder().decode(cover.png)
    }

    @Test(
        "Given an RGB JPEG larger than max_dimension, baseline or progressive, DCT-scaled or not, when converted, then the PNG has the old route's pixels",
        arguments: [
            ("-quality 90", 1000, 750, 100),  // DCT 2/8, then Lanczos
            ("-quality 90", 800, 600, 20),  // DCT 1/8, a box pass, then Lanczos
            ("-quality 90 -progressive", 400, 300, 300),  // no DCT scale
            ("-quality 85 -sample 2x1", 333, 517, 100),  // 4:2:2, odd sides, DCT 4/8
            ("-quality 95 -sample 1x1 -progressive", 257, 129, 200),  // 4:4:4
        ])
    func rgb(options: String, width: Int, height: Int, maxDimension: Int) throws {
        // Given
        let tools = ImageTools()
        let source = Raster.pattern(width: width, height: height, channels: 3)
        let jpeg = try tools.run("cjpeg \(options) in.ppm > out.jpg", input: ("in.ppm", source.pam), output: "out.jpg")
        let expected = try Self.oldRoute(jpeg, width: width, height: height, maxDimension: maxDimension, tools: tools)

        // When
        let image = try Self.converted(jpeg, maxDimension: maxDimension)

        // Then
        #expect(image.channels == 3 && max(image.width, image.height) == maxDimension)
        let same = image == expected
        #expect(same, "mean difference \(Self.meanDifference(image, expected))")
    }

    @Test(
        "Given a grayscale JPEG larger than max_dimension, when converted, then the PNG is gray with the old route's pixels",
        arguments: [(1000, 750, 100), (300, 200, 150)])
    func gray(width: Int, height: Int, maxDimension: Int) throws {
        // Given
        let tools = ImageTools()
        let source = Raster.pattern(width: width, height: height, channels: 1)
        let jpeg = try tools.run("cjpeg -quality 90 in.pgm > out.jpg", input: ("in.pgm", source.pam), output: "out.jpg")
        let expected = try Self.oldRoute(jpeg, width: width, height: height, maxDimension: maxDimension, tools: tools)

        // When
        let image = try Self.converted(jpeg, maxDimension: maxDimension)

        // Then
        #expect(image.channels == 1)
        let same = image == expected
        #expect(same, "mean difference \(Self.meanDifference(image, expected))")
    }

    @Test("Given a JPEG with EXIF orientation 1–8 larger than max_dimension, when converted, then the PNG is the old route's turned picture",
          arguments: 1...8)
    func orientation(_ orientation: Int) throws {
        // Given
        let tools = ImageTools()
        let source = Raster.pattern(width: 640, height: 400, channels: 3, seed: orientation)
        let plain = try tools.run("cjpeg -quality 90 in.ppm > out.jpg", input: ("in.ppm", source.pam), output: "out.jpg")
        let jpeg = ImageSurgery.jpeg(plain, orientation: orientation)
        let expected = try Self.oldRoute(plain, width: 640, height: 400, orientation: orientation, maxDimension: 100, tools: tools)

        // When
        let image = try Self.converted(jpeg, maxDimension: 100)

        // Then
        #expect((image.width, image.height) == (orientation >= 5 ? (63, 100) : (100, 63)))
        let same = image == expected
        #expect(same, "orientation \(orientation): mean difference \(Self.meanDifference(image, expected))")
    }

    @Test(
        "Given a CMYK JPEG (Adobe, inverted) larger than max_dimension, DCT-scaled or not, when converted, then the PNG is RGB with the old route's pixels",
        arguments: [(160, 120), (800, 600)])
    func cmyk(width: Int, height: Int) throws {
        // Given
        let tools = ImageTools()
        let source = Raster.pattern(width: width, height: height, channels: 3)
        let jpeg = try tools.run(
            "/usr/bin/convert in.ppm -colorspace CMYK -quality 95 cmyk.jpg", input: ("in.ppm", source.pam), output: "cmyk.jpg")
        #expect(ImageConversionTests.jpegComponents(jpeg) == 4, "ImageMagick wrote a CMYK JPEG")
        let expected = try Self.oldRoute(jpeg, width: width, height: height, maxDimension: 100, tools: tools)

        // When
        let image = try Self.converted(jpeg, maxDimension: 100)

        // Then
        #expect(image.channels == 3 && image.width == 100)
        let same = image == expected
        #expect(same, "mean difference \(Self.meanDifference(image, expected))")
    }

    @Test("Given a JPEG larger than max_dimension, when decoded, then it comes in pixman's byte order at libjpeg's DCT scale; without scaling it stays packed")
    func route() throws {
        // Given
        let tools = ImageTools()
        let source = Raster.pattern(width: 1000, height: 750, channels: 3)
        let jpeg = try tools.run("cjpeg -quality 90 in.ppm > out.jpg", input: ("in.ppm", source.pam), output: "out.jpg")
        let gray = try tools.run("cjpeg -grayscale in.ppm > gray.jpg", input: ("in.ppm", source.pam), output: "gray.jpg")
        let quarter = try Raster(netpbm: tools.run("djpeg -scale 2/8 -pnm out.jpg > ref.pnm", output: "ref.pnm"))
        let decoder = JPEGDecoder(limits: ImageLimits())

        // When
        let scaled = try decoder.decode(jpeg, maxDimension: 100)
        let scaledGray = try decoder.decode(gray, maxDimension: 100)
        let fitting = try decoder.decode(jpeg, maxDimension: 1000)
        let unscaled = try decoder.decode(jpeg)

        // Then
        guard case .pixman(let surface) = scaled.pixels else { Issue.record("a JPEG to be scaled came back packed"); return }
        #expect((surface.width, surface.height, surface.channels, surface.stride) == (250, 188, 3, 1000))
        let row = UnsafeRawBufferPointer(start: surface.bits + 100 * surface.stride, count: surface.stride)
        let at = (100 * 250 + 7) * 3
        let word = UInt32(255) << 24 | UInt32(quarter.pixels[at]) << 16 | UInt32(quarter.pixels[at + 1]) << 8 | UInt32(quarter.pixels[at + 2])
        #expect(row.load(fromByteOffset: 28, as: UInt32.self) == word, "one opaque a8r8g8b8 word a pixel, in the machine's order")
        guard case .pixman(let graySurface) = scaledGray.pixels else { Issue.record("a gray JPEG to be scaled came back packed"); return }
        #expect((graySurface.width, graySurface.height, graySurface.channels, graySurface.stride) == (250, 188, 1, 252))
        for decoded in [fitting, unscaled] {
            guard case .packed(let image) = decoded.pixels else { Issue.record("a JPEG not to be scaled came back in pixman's layout"); continue }
            #expect((image.width, image.height, image.channels) == (1000, 750, 3))
        }
    }

    @Test("Given a JPEG to be scaled cut short, when converted, then it fails with libjpeg's reason")
    func truncated() throws {
        // Given
        let tools = ImageTools()
        let jpeg = try tools.run("cjpeg in.ppm > out.jpg", input: ("in.ppm", Raster.pattern(width: 400, height: 300, channels: 3).pam), output: "out.jpg")

        for fraction in [0.3, 0.6, 0.95] {
            // When
            var failure: CoverImageError?
            do {
                _ = try CoverImagePipeline(output: ImageOutput(maxDimension: 100)).makePNG(from: Array(jpeg.prefix(Int(Double(jpeg.count) * fraction))))
            } catch {
                failure = error
            }

            // Then
            let text = failure?.description ?? "converted"
            #expect(text.hasPrefix("cannot decode jpeg: "), "cut at \(fraction): \(text)")
        }
    }

    @Test("Given a stop that lands midway, when a JPEG to be scaled is decoded, then it throws cancelled")
    func cancelledMidway() throws {
        // Given: decoded at 6/8 (30×225), so the decoder looks 8 times; the third look is a third of the way down.
        let tools = ImageTools()
        let jpeg = try tools.run("cjpeg in.ppm > out.jpg", input: ("in.ppm", Raster.pattern(width: 40, height: 300, channels: 3).pam), output: "out.jpg")
        let pipeline = CoverImagePipeline(output: ImageOutput(maxDimension: 100))

        // When, then
        #expect(throws: CoverImageError.cancelled) {
            try pipeline.makePNG(from: jpeg, cancellation: ConversionCancellation(cancellingAtLook: 3))
        }
        #expect(try pipeline.makePNG(from: jpeg, cancellation: ConversionCancellation()).info.height == 100)
    }

    static func meanDifference(_ a: PixelImage, _ b: PixelImage) -> Double {
        Raster(width: a.width, height: a.height, channels: a.channels, pixels: a.pixels)
            .meanDifference(from: Raster(width: b.width, height: b.height, channels: b.channels, pixels: b.pixels))
    }
}
