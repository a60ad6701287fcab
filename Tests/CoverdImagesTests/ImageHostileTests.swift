@testable import CoverdImages
import CoverdTestSupport
import Foundation
import Testing

/// Broken, hostile and unsupported images: each is refused with a reason
/// that names what is wrong, and none gets as far as allocating its pixels.
@Suite("Hostile and unsupported images")
struct ImageHostileTests {
    let pipeline = CoverImagePipeline()

    /// One valid image of each converted format, made by the independent tools.
    static func samples(_ tools: ImageTools) throws -> [ImageKind: [UInt8]] {
        let rgb = Raster.pattern(width: 64, height: 48, channels: 3).pam
        return [
            .jpeg: try tools.run("cjpeg -quality 90 in.ppm > out.jpg", input: ("in.ppm", rgb), output: "out.jpg"),
            .webp: try tools.run("cwebp -quiet -lossless in.ppm -o out.webp", input: ("in.ppm", rgb), output: "out.webp"),
            .gif: try tools.run("pamtogif in.pam > out.gif", input: ("in.pam", Raster.palette(width: 64, height: 48).pam), output: "out.gif"),
            .png: PNGFixture.make(width: 64, height: 48),
        ]
    }

    func failure(_ body: [UInt8]) -> CoverImageError? {
        do {
            _ = try pipeline.makePNG(from: body)
            return nil
        } catch {
            return error
        }
    }

    @Test("Given an image of each format cut short, when converted, then it fails with the decoder's reason",
          arguments: [ImageKind.jpeg, .webp, .gif, .png])
    func truncated(_ kind: ImageKind) throws {
        let sample = try #require(Self.samples(ImageTools())[kind])
        #expect(failure(sample) == nil, "the whole file converts")
        for fraction in [0.3, 0.6, 0.95] {
            let error = failure(Array(sample.prefix(Int(Double(sample.count) * fraction))))
            let text = error?.description ?? "converted"
            let expected = kind == .png ? "truncated PNG" : "cannot decode \(kind.rawValue): "
            #expect(text.hasPrefix(expected), "\(kind) cut at \(fraction): \(text)")
        }
    }

    @Test("Given an image of each format whose data after the header is garbage, when converted, then it fails without crashing",
          arguments: [ImageKind.jpeg, .webp, .gif, .png])
    func corrupt(_ kind: ImageKind) throws {
        let sample = try #require(Self.samples(ImageTools())[kind])
        // Header kept (up to the first 30 bytes), the rest scrambled deterministically.
        let keep = kind == .png ? 33 : 30
        var state: UInt32 = 2_463_534_242
        let scrambled = sample.prefix(keep) + sample.dropFirst(keep).map { byte -> UInt8 in
            state ^= state << 13; state ^= state >> 17; state ^= state << 5
            return byte ^ UInt8(truncatingIfNeeded: state | 1)
        }
        let text = failure(Array(scrambled))?.description ?? "converted"
        let expected = kind == .png ? "invalid PNG chunk at byte 33" : "cannot decode \(kind.rawValue): "
        #expect(text.hasPrefix(expected), "\(kind): \(text)")
    }

    @Test("Given a JPEG whose entropy-coded data is damaged, when converted, then libjpeg's warning refuses it instead of grey pixels")
    func damagedJPEGData() throws {
        let tools = ImageTools()
        var jpeg = try #require(Self.samples(tools)[.jpeg])
        // A restart marker where none may be: the entropy-coded segment ends early.
        jpeg[jpeg.count / 2] = 0xFF
        jpeg[jpeg.count / 2 + 1] = 0xD3
        let text = failure(jpeg)?.description ?? "converted"
        #expect(text.hasPrefix("cannot decode jpeg: Corrupt JPEG data"), "\(text)")
    }

    @Test("Given a header of each format claiming an enormous image, when converted, then it is refused as too large before decoding",
          arguments: [ImageKind.jpeg, .webp, .gif, .png])
    func bomb(_ kind: ImageKind) throws {
        let samples = try Self.samples(ImageTools())
        let (body, size): ([UInt8], String)
        switch kind {
        case .jpeg: (body, size) = (ImageSurgery.jpeg(samples[.jpeg]!, claimingWidth: 60_000, height: 60_000), "60000×60000")
        case .webp:
            let lossy = try ImageTools().run("cwebp -quiet in.ppm -o out.webp",
                                             input: ("in.ppm", Raster.pattern(width: 16, height: 16, channels: 3).pam), output: "out.webp")
            (body, size) = (ImageSurgery.webp(lossy, claimingWidth: 16_383, height: 16_383), "16383×16383")
        case .gif: (body, size) = (ImageSurgery.gif(samples[.gif]!, claimingWidth: 65_535, height: 65_535), "65535×65535")
        default: (body, size) = (PNGFixture.claiming(width: 100_000, height: 100_000), "100000×100000")
        }
        let text = failure(body)?.description ?? "converted"
        #expect(text.hasPrefix("image is too large (\(size);"), "\(kind): \(text)")
    }

    @Test("Given a GIF frame claiming 65535×65535 on a small screen, when converted, then the frame is refused as too large")
    func gifFrameBomb() throws {
        let gif = try #require(Self.samples(ImageTools())[.gif])
        let text = failure(ImageSurgery.gif(gif, frameLeft: 0, top: 0, width: 65_535, height: 65_535))?.description ?? "converted"
        #expect(text.hasPrefix("image is too large (65535×65535;"), "\(text)")
    }

    @Test("Given 10000×10000 within the side limit, when converted, then the 50-megapixel limit refuses it")
    func tooManyPixels() throws {
        let jpeg = try #require(Self.samples(ImageTools())[.jpeg])
        let text = failure(ImageSurgery.jpeg(jpeg, claimingWidth: 10_000, height: 10_000))?.description
        #expect(text == "image is too large (10000×10000; limit 50000000 pixels)")
    }

    @Test("Given a progressive JPEG with more scans than allowed, when decoded, then it is refused instead of decoded for minutes")
    func scanBomb() throws {
        let tools = ImageTools()
        // DC first, then 33 one-coefficient AC scans per component: 100 scans, cjpeg's maximum.
        var script = ["0,1,2: 0 0 0 0;"]
        for component in 0..<3 { script += (1...33).map { "\(component): \($0) \($0) 0 0;" } }
        try script.joined(separator: "\n").write(toFile: tools.directory + "/scans.txt", atomically: true, encoding: .utf8)
        let jpeg = try tools.run("cjpeg -scans scans.txt in.ppm > out.jpg",
                                 input: ("in.ppm", Raster.pattern(width: 32, height: 32, channels: 3).pam), output: "out.jpg")
        #expect(throws: CoverImageError.decodeFailed(.jpeg, "more than 50 progressive scans")) {
            try JPEGDecoder(limits: ImageLimits(), maxScans: 50).decode(jpeg)
        }
        #expect(failure(jpeg) == nil, "100 scans are within the default limit")
    }

    @Test("Given BMP, TIFF and SVG covers, when converted, then each is an unsupported image format named by kind")
    func unsupported() throws {
        let tools = ImageTools()
        let ppm = Raster.pattern(width: 16, height: 16, channels: 3).pam
        let bmp = try tools.run("ppmtobmp in.ppm > out.bmp", input: ("in.ppm", ppm), output: "out.bmp")
        let tiff = try tools.run("pamtotiff in.ppm > out.tif", input: ("in.ppm", ppm), output: "out.tif")
        let svg = Array("<?xml version=\"1.0\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"10\" height=\"10\"/>".utf8)
        #expect(failure(bmp)?.description == "unsupported image format: bmp")
        #expect(failure(tiff)?.description == "unsupported image format: tiff")
        #expect(failure(svg)?.description == "unsupported image format: svg")
        #expect(failure(Array("<!doctype html><p>gone</p>".utf8))?.description == "unsupported image format: html (not an image)")
    }

    @Test("Given a JPEG to be scaled down, when its DCT scale is chosen, then it is the smallest eighth at least twice the target")
    func dctScale() {
        #expect(JPEGDecoder.eighths(width: 4000, height: 3000, orientation: 1, fitting: (500, 375)) == 2)
        #expect(JPEGDecoder.eighths(width: 4000, height: 3000, orientation: 1, fitting: (501, 376)) == 3)
        #expect(JPEGDecoder.eighths(width: 3000, height: 4000, orientation: 6, fitting: (500, 375)) == 2, "turned: width and height swap")
        #expect(JPEGDecoder.eighths(width: 400, height: 300, orientation: 1, fitting: (300, 225)) == 8)
        #expect(JPEGDecoder.eighths(width: 400, height: 300, orientation: 1, fitting: nil) == 8)
    }
}
