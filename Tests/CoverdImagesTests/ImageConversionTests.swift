import CoverdImages
import CoverdTestSupport
import Foundation
import Testing

/// Every image here is written by an independent tool (cjpeg, cwebp,
/// pamtogif, ImageMagick), converted by coverd's pipeline, then decoded by
/// netpbm's pngtopam and compared with the tool's own reference decode.
@Suite("Image formats become PNGs")
struct ImageConversionTests {
    static let url = "https://covers.example/a/cover"

    /// Converts, checks the PNG is whole (full inflate), and decodes it independently.
    func convert(_ body: [UInt8], _ tools: ImageTools, output: ImageOutput = ImageOutput()) throws -> (CoverPNG, Raster) {
        let cover = try CoverImagePipeline(output: output).makePNG(from: body, sourceURL: Self.url)
        _ = try PNGValidator().validate(cover.png)
        return (cover, try tools.decodePNG(cover.png))
    }

    @Test(
        "Given a baseline, progressive or grayscale JPEG from cjpeg, when converted, then the PNG matches djpeg's decode",
        arguments: [("-quality 90", 3), ("-quality 85 -progressive", 3), ("-quality 90 -grayscale", 1)])
    func jpeg(options: String, channels: Int) throws {
        let tools = ImageTools()
        let source = Raster.pattern(width: 67, height: 45, channels: 3)
        let jpeg = try tools.run("cjpeg \(options) in.ppm > out.jpg", input: ("in.ppm", source.pam), output: "out.jpg")
        let reference = try Raster(netpbm: tools.run("djpeg -pnm out.jpg > ref.pnm", output: "ref.pnm"))
        let (cover, decoded) = try convert(jpeg, tools)
        #expect(cover.sourceKind == .jpeg)
        #expect(decoded.channels == channels && cover.info.colorType == (channels == 1 ? 0 : 2))
        let difference = decoded.meanDifference(from: reference)
        #expect(difference <= 1.0, "mean difference \(difference)")
    }

    @Test("Given a CMYK JPEG (Adobe, inverted) from ImageMagick, when converted, then the PNG is RGB close to ImageMagick's own decode")
    func cmykJPEG() throws {
        let tools = ImageTools()
        let source = Raster.pattern(width: 48, height: 40, channels: 3)
        let jpeg = try tools.run(
            "/usr/bin/convert in.ppm -colorspace CMYK -quality 95 cmyk.jpg", input: ("in.ppm", source.pam), output: "cmyk.jpg")
        #expect(Self.jpegComponents(jpeg) == 4, "ImageMagick wrote a CMYK JPEG")
        let reference = try Raster(netpbm: tools.run("/usr/bin/convert cmyk.jpg -colorspace sRGB -depth 8 ppm:ref.ppm", output: "ref.ppm"))
        let (_, decoded) = try convert(jpeg, tools)
        #expect(decoded.channels == 3)
        let difference = decoded.meanDifference(from: reference)
        #expect(difference <= 2.0, "mean difference \(difference)")
        #expect(decoded.meanDifference(from: source) <= 4.0, "close to the original picture too")
    }

    /// pamflip's transformation for each EXIF orientation (1 is the identity).
    static let flips = [2: "-lr", 3: "-r180", 4: "-tb", 5: "-transpose", 6: "-cw", 7: "-xform=transpose,leftright,topbottom", 8: "-ccw"]

    @Test("Given a JPEG with EXIF orientation 1–8, when converted, then the PNG is the picture as it is meant to be shown",
          arguments: 1...8)
    func orientation(_ orientation: Int) throws {
        let tools = ImageTools()
        let source = Raster.pattern(width: 48, height: 32, channels: 3, seed: orientation)
        let plain = try tools.run("cjpeg -quality 95 in.ppm > plain.jpg", input: ("in.ppm", source.pam), output: "plain.jpg")
        let flip = Self.flips[orientation].map { " | pamflip \($0)" } ?? ""
        let reference = try Raster(netpbm: tools.run("djpeg -pnm plain.jpg\(flip) > ref.ppm", output: "ref.ppm"))
        let (_, decoded) = try convert(ImageSurgery.jpeg(plain, orientation: orientation), tools)
        #expect((decoded.width, decoded.height) == (orientation >= 5 ? (32, 48) : (48, 32)))
        let difference = decoded.meanDifference(from: reference)
        #expect(difference <= 1.0, "orientation \(orientation): mean difference \(difference)")
    }

    @Test("Given EXIF written little-endian, or after an XMP segment, when converted, then the orientation still applies",
          arguments: [(true, false), (false, true)])
    func orientationVariants(littleEndian: Bool, xmpFirst: Bool) throws {
        let tools = ImageTools()
        let plain = try tools.run("cjpeg -quality 95 in.ppm > plain.jpg",
                                  input: ("in.ppm", Raster.pattern(width: 48, height: 32, channels: 3).pam), output: "plain.jpg")
        let reference = try Raster(netpbm: tools.run("djpeg -pnm plain.jpg | pamflip -ccw > ref.ppm", output: "ref.ppm"))
        let (_, decoded) = try convert(ImageSurgery.jpeg(plain, orientation: 8, littleEndian: littleEndian, xmpFirst: xmpFirst), tools)
        #expect(decoded.meanDifference(from: reference) <= 1.0)
    }

    @Test("Given a progressive 4:4:4 JPEG and a small max_pixels it fits, when converted, then libjpeg's memory cap does not refuse it")
    func progressiveWithinSmallLimits() throws {
        let tools = ImageTools()
        let jpeg = try tools.run("cjpeg -progressive -sample 1x1 in.ppm > p.jpg",
                                 input: ("in.ppm", Raster.pattern(width: 1000, height: 1000, channels: 3).pam), output: "p.jpg")
        var limits = ImageLimits()
        limits.maxPixels = 1_000_000
        let cover = try CoverImagePipeline(limits: limits).makePNG(from: jpeg)
        #expect(cover.info.width == 1000 && cover.info.height == 1000)
    }

    @Test("Given lossless WebP with alpha from cwebp, when converted, then the PNG is RGBA and exactly dwebp's decode")
    func losslessWebP() throws {
        let tools = ImageTools()
        let source = Raster.pattern(width: 50, height: 30, channels: 4)
        let webp = try tools.run("cwebp -quiet -lossless -exact in.pam -o out.webp", input: ("in.pam", source.pam), output: "out.webp")
        let reference = try Raster(netpbm: tools.run("dwebp -quiet out.webp -pam -o ref.pam", output: "ref.pam"))
        let (cover, decoded) = try convert(webp, tools)
        #expect(cover.sourceKind == .webp && cover.info.colorType == 6)
        #expect(decoded == reference)
        #expect(decoded == source, "lossless means the original pixels")
    }

    @Test("Given lossy WebP, opaque or with alpha, when converted, then the PNG matches dwebp's decode",
          arguments: [3, 4])
    func lossyWebP(channels: Int) throws {
        let tools = ImageTools()
        let source = Raster.pattern(width: 64, height: 40, channels: channels)
        let webp = try tools.run("cwebp -quiet -q 80 in.pam -o out.webp", input: ("in.pam", source.pam), output: "out.webp")
        let reference = try Raster(netpbm: tools.run("dwebp -quiet out.webp -pam -o ref.pam", output: "ref.pam"))
        let (_, decoded) = try convert(webp, tools)
        #expect(decoded.channels == channels, "RGB when opaque, RGBA with alpha")
        let expected = channels == 3 ? reference.withoutAlpha : reference
        let difference = decoded.meanDifference(from: expected)
        #expect(difference <= 1.0, "mean difference \(difference)")
    }

    @Test("Given a GIF from pamtogif, plain, interlaced or with a transparent colour, when converted, then the first frame is exact",
          arguments: [("", 0), ("-interlace", 0), ("", 5)])
    func gif(options: String, transparentCorner: Int) throws {
        let tools = ImageTools()
        let source = Raster.palette(width: 40, height: 24, transparentCorner: transparentCorner)
        let gif = try tools.run("pamtogif \(options) in.pam > out.gif", input: ("in.pam", source.pam), output: "out.gif")
        let reference = try Raster(netpbm: tools.run("giftopnm out.gif > ref.ppm", output: "ref.ppm"))
        let (cover, decoded) = try convert(gif, tools)
        #expect(cover.sourceKind == .gif)
        if transparentCorner > 0 {
            #expect(decoded.channels == 4)
            for y in 0..<source.height {
                for x in 0..<source.width {
                    let at = (y * source.width + x) * 4
                    #expect(decoded.pixels[at + 3] == source.pixels[at + 3], "alpha at \(x),\(y)")
                    if source.pixels[at + 3] == 255 {
                        #expect(Array(decoded.pixels[at..<(at + 3)]) == Array(source.pixels[at..<(at + 3)]), "colour at \(x),\(y)")
                        let ref = (y * source.width + x) * 3
                        #expect(Array(decoded.pixels[at..<(at + 3)]) == Array(reference.pixels[ref..<(ref + 3)]), "giftopnm at \(x),\(y)")
                    }
                }
            }
        } else {
            #expect(decoded.withoutAlpha.meanDifference(from: reference.withoutAlpha) == 0, "giftopnm's decode")
            #expect(decoded.channels == 3 && decoded == source)
        }
    }

    @Test("Given an animated WebP from img2webp, when converted, then the PNG is its first frame")
    func animatedWebP() throws {
        let tools = ImageTools()
        var frames: [Raster] = []
        for name in ["a", "b"] {
            let frame = Raster.pattern(width: 24, height: 16, channels: 3, seed: frames.count)
            frames.append(frame)
            try tools.run("cwebp -quiet -lossless in\(name).ppm -o \(name).webp", input: ("in\(name).ppm", frame.pam), output: "\(name).webp")
        }
        let animated = try tools.run("img2webp -loop 0 -lossless a.webp -d 500 b.webp -o anim.webp", output: "anim.webp")
        let (cover, decoded) = try convert(animated, tools)
        #expect(cover.sourceKind == .webp)
        #expect(decoded == frames[0])
    }

    @Test("Given max_dimension, when a larger JPEG, PNG or WebP is converted, then it is scaled to fit, aspect kept, close to pamscale's Lanczos",
          arguments: ["jpeg", "png", "gray-png", "webp-alpha"])
    func maxDimension(format: String) throws {
        let tools = ImageTools()
        let channels = format == "webp-alpha" ? 4 : format == "gray-png" ? 1 : 3
        let source = Raster.pattern(width: 400, height: 300, channels: channels)
        let body: [UInt8]
        switch format {
        case "jpeg": body = try tools.run("cjpeg -quality 95 in.ppm > out.jpg", input: ("in.ppm", source.pam), output: "out.jpg")
        case "png", "gray-png": body = try tools.run("pnmtopng in.pnm > out.png", input: ("in.pnm", source.pam), output: "out.png")
        default: body = try tools.run("cwebp -quiet -lossless -exact in.pam -o out.webp", input: ("in.pam", source.pam), output: "out.webp")
        }
        let (cover, decoded) = try convert(body, tools, output: ImageOutput(maxDimension: 100))
        #expect((decoded.width, decoded.height) == (100, 75))
        #expect(decoded.channels == channels && cover.info.width == 100)
        let reference = try Raster(netpbm: tools.run("pamscale -xyfit 100 100 -filter=lanczos in.pnm > ref.pam",
                                                     input: ("in.pnm", source.pam), output: "ref.pam"))
        let difference = decoded.meanDifference(from: reference)
        #expect(difference <= 1.5, "\(format): mean difference \(difference) from pamscale")
    }

    @Test("Given max_dimension and a JPEG turned by EXIF, when converted, then the displayed (turned) picture is what fits")
    func maxDimensionAfterOrientation() throws {
        let tools = ImageTools()
        let jpeg = try tools.run("cjpeg in.ppm > out.jpg", input: ("in.ppm", Raster.pattern(width: 400, height: 200, channels: 3).pam), output: "out.jpg")
        let (_, decoded) = try convert(ImageSurgery.jpeg(jpeg, orientation: 6), tools, output: ImageOutput(maxDimension: 64))
        #expect((decoded.width, decoded.height) == (32, 64))
    }

    @Test("Given max_dimension, when a cover is already small enough, then its size is kept and a PNG stays byte for byte")
    func maxDimensionSmallCover() throws {
        let tools = ImageTools()
        let source = Raster.pattern(width: 80, height: 60, channels: 3)
        let png = try tools.run("pnmtopng in.ppm > out.png", input: ("in.ppm", source.pam), output: "out.png")
        let jpeg = try tools.run("cjpeg in.ppm > out.jpg", input: ("in.ppm", source.pam), output: "out.jpg")
        #expect(try CoverImagePipeline(output: ImageOutput(maxDimension: 80)).makePNG(from: png).png == png)
        let (_, decoded) = try convert(jpeg, tools, output: ImageOutput(maxDimension: 80))
        #expect((decoded.width, decoded.height) == (80, 60))
    }

    @Test("Given a GIF whose frame is smaller than its screen and offset, when converted, then the frame sits there on a transparent screen")
    func gifFrameOnScreen() throws {
        let tools = ImageTools()
        let source = Raster.palette(width: 40, height: 24)
        let plain = try tools.run("pamtogif in.ppm > out.gif", input: ("in.ppm", source.pam), output: "out.gif")
        let placed = ImageSurgery.gif(ImageSurgery.gif(plain, claimingWidth: 50, height: 30), frameLeft: 6, top: 4)
        let (_, decoded) = try convert(placed, tools)
        #expect((decoded.width, decoded.height, decoded.channels) == (50, 30, 4))
        for y in 0..<30 {
            for x in 0..<50 {
                let at = (y * 50 + x) * 4
                let inside = (6..<46).contains(x) && (4..<28).contains(y)
                #expect(decoded.pixels[at + 3] == (inside ? 255 : 0), "alpha at \(x),\(y)")
                if inside {
                    let from = ((y - 4) * 40 + (x - 6)) * 3
                    #expect(Array(decoded.pixels[at..<(at + 3)]) == Array(source.pixels[from..<(from + 3)]), "colour at \(x),\(y)")
                }
            }
        }
    }

    @Test("Given a converted cover, when written, then it is 8-bit with only IHDR, tEXt (source URL and format), IDAT and IEND")
    func metadata() throws {
        let tools = ImageTools()
        let source = Raster.pattern(width: 20, height: 20, channels: 3)
        let jpeg = try tools.run("cjpeg in.ppm > out.jpg", input: ("in.ppm", source.pam), output: "out.jpg")
        let withExif = ImageSurgery.jpeg(jpeg, orientation: 1)
        let (cover, _) = try convert(withExif, tools)
        #expect(PNGChunks.texts(cover.png) == ["Source URL": Self.url, "Source Format": "jpeg"])
        #expect(Set(PNGChunks.list(cover.png).map(\.type)).subtracting(["IHDR", "tEXt", "IDAT"]) == ["IEND"])
        #expect(PNGChunks.header(cover.png)?.bitDepth == 8)
    }

    @Test("Given a compression level, when encoding, then level 0 stores and level 9 compresses")
    func compressionLevel() throws {
        let tools = ImageTools()
        let webp = try tools.run("cwebp -quiet -lossless in.ppm -o out.webp",
                                 input: ("in.ppm", Raster.pattern(width: 120, height: 90, channels: 3).pam), output: "out.webp")
        let stored = try CoverImagePipeline(output: ImageOutput(compressionLevel: 0)).makePNG(from: webp)
        let packed = try CoverImagePipeline(output: ImageOutput(compressionLevel: 9)).makePNG(from: webp)
        #expect(stored.png.count > 120 * 90 * 3)
        #expect(packed.png.count < stored.png.count / 4)
        #expect(try tools.decodePNG(stored.png) == tools.decodePNG(packed.png))
    }

    static func jpegComponents(_ jpeg: [UInt8]) -> Int? {
        var offset = 2
        while offset + 10 < jpeg.count, jpeg[offset] == 0xFF {
            let marker = jpeg[offset + 1], length = Int(jpeg[offset + 2]) << 8 | Int(jpeg[offset + 3])
            if (0xC0...0xC2).contains(marker) { return Int(jpeg[offset + 9]) }
            offset += 2 + length
        }
        return nil
    }
}
