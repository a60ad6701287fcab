import CoverdSync
import CoverdTestSupport
import Foundation
import Testing

/// Covers in every format, made by the independent tools and served on
/// loopback, through the real daemon: converted ones must match the tools'
/// own decodes, broken ones must fail with their reason, and the cache must
/// hold only valid PNGs throughout.
@Suite("End to end: image formats", .serialized)
struct ImageFormatsEndToEndTests {
    enum Expected {
        /// Cached, and within this mean difference of the reference decode (`reference` is a shell command writing ref.pnm).
        case converted(reference: String, tolerance: Double, format: String)
        case storedAsServed
        case failed(String)
    }

    struct Cover {
        var title: String
        var file: String
        /// Shell command writing `file` in the tools' directory (from in.ppm / in.pam / palette.pam).
        var make: String
        var expected: Expected
        /// Byte surgery after `make`.
        var alter: (@Sendable ([UInt8]) -> [UInt8])? = nil
    }

    static let covers: [Cover] = [
        Cover(title: "Baseline JPEG", file: "a.jpg", make: "cjpeg -quality 90 in.ppm > a.jpg",
              expected: .converted(reference: "djpeg -pnm a.jpg > ref.pnm", tolerance: 1, format: "jpeg")),
        Cover(title: "Progressive grayscale JPEG", file: "b.jpg", make: "cjpeg -grayscale -progressive in.ppm > b.jpg",
              expected: .converted(reference: "djpeg -pnm b.jpg > ref.pnm", tolerance: 1, format: "jpeg")),
        Cover(title: "Turned JPEG", file: "c.jpg", make: "cjpeg in.ppm > c.jpg",
              expected: .converted(reference: "djpeg -pnm c.jpg | pamflip -cw > ref.pnm", tolerance: 1, format: "jpeg"),
              alter: { ImageSurgery.jpeg($0, orientation: 6) }),
        Cover(title: "Lossless WebP with alpha", file: "d.webp", make: "cwebp -quiet -lossless -exact in.pam -o d.webp",
              expected: .converted(reference: "dwebp -quiet d.webp -pam -o ref.pnm", tolerance: 0, format: "webp")),
        Cover(title: "Lossy WebP", file: "e.webp", make: "cwebp -quiet -q 75 in.ppm -o e.webp",
              expected: .converted(reference: "dwebp -quiet e.webp -ppm -o ref.pnm", tolerance: 1, format: "webp")),
        Cover(title: "GIF", file: "f.gif", make: "pamtogif palette.pam > f.gif",
              expected: .converted(reference: "giftopnm f.gif > ref.pnm", tolerance: 0, format: "gif")),
        Cover(title: "PNG", file: "g.png", make: "pnmtopng in.ppm > g.png", expected: .storedAsServed),
        Cover(title: "HTML page", file: "p.html", make: "printf '<!doctype html><title>moved</title>' > p.html",
              expected: .failed("unsupported image format: html")),
        Cover(title: "BMP", file: "h.bmp", make: "ppmtobmp in.ppm > h.bmp", expected: .failed("unsupported image format: bmp")),
        Cover(title: "TIFF", file: "i.tif", make: "pamtotiff in.ppm > i.tif", expected: .failed("unsupported image format: tiff")),
        Cover(title: "Truncated JPEG", file: "j.jpg", make: "cjpeg in.ppm > j.jpg", expected: .failed("cannot decode jpeg: "),
              alter: { Array($0.prefix($0.count / 2)) }),
        Cover(title: "Truncated WebP", file: "k.webp", make: "cwebp -quiet in.ppm -o k.webp", expected: .failed("cannot decode webp: "),
              alter: { Array($0.prefix($0.count / 2)) }),
        Cover(title: "Truncated GIF", file: "l.gif", make: "pamtogif palette.pam > l.gif", expected: .failed("cannot decode gif: "),
              alter: { Array($0.prefix($0.count / 2)) }),
        Cover(title: "JPEG bomb", file: "m.jpg", make: "cjpeg in.ppm > m.jpg", expected: .failed("image is too large (60000×60000"),
              alter: { ImageSurgery.jpeg($0, claimingWidth: 60_000, height: 60_000) }),
        Cover(title: "GIF bomb", file: "n.gif", make: "pamtogif palette.pam > n.gif", expected: .failed("image is too large (65535×65535"),
              alter: { ImageSurgery.gif($0, claimingWidth: 65_535, height: 65_535) }),
        // Chunk-valid PNGs, every CRC right, whose pixels a decoder would refuse: made here by `alter`, not by a tool.
        Cover(title: "PNG with half its rows", file: "q.png", make: ": > q.png",
              expected: .failed("image data holds 5208 bytes, the header says 10416"),
              alter: { _ in storedPNG(rows: 24) }),
        Cover(title: "PNG with a wrong Adler-32", file: "r.png", make: ": > r.png",
              expected: .failed("image data fails its Adler-32 checksum"),
              alter: { _ in storedPNG(rows: 48) { $0[$0.count - 1] ^= 1 } }),
        Cover(title: "PNG with a row of an unknown filter type", file: "s.png", make: ": > s.png",
              expected: .failed("scanline 31 of 48 has filter type 9 (PNG allows 0 to 4)"),
              alter: { _ in storedPNG(rows: 48, editRows: { $0[30 * (1 + 3 * 72)] = 9 }) }),
        Cover(title: "WebP bomb", file: "o.webp", make: "cwebp -quiet in.ppm -o o.webp", expected: .failed("image is too large (16383×16383"),
              alter: { ImageSurgery.webp($0, claimingWidth: 16_383, height: 16_383) }),
    ]

    /// A 72×48 RGB PNG claiming 48 rows whose IDAT holds `rows` rows of zeros
    /// (changed by `editRows`) as a stored zlib stream (then changed by `edit`).
    static func storedPNG(
        rows: Int, edit: (inout [UInt8]) -> Void = { _ in }, editRows: (inout [UInt8]) -> Void = { _ in }
    ) -> [UInt8] {
        var data = [UInt8](repeating: 0, count: rows * (1 + 3 * 72))
        editRows(&data)
        var stream = PNGFixture.zlibStoredForTests(data)
        edit(&stream)
        let header = PNGFixture.bigEndianForTests(72) + PNGFixture.bigEndianForTests(48) + [8, 2, 0, 0, 0]
        return PNGFixture.signature + PNGFixture.chunk("IHDR", header) + PNGFixture.chunk("IDAT", stream) + PNGFixture.chunk("IEND", [])
    }

    /// Makes every cover with the tools and serves it; returns the tools (their directory holds the inputs).
    static func serveCovers(_ world: World, width: Int = 72, height: Int = 48) throws -> ImageTools {
        let tools = ImageTools()
        try Data(Raster.pattern(width: width, height: height, channels: 3).pam).write(to: URL(fileURLWithPath: tools.directory + "/in.ppm"))
        try Data(Raster.pattern(width: width, height: height, channels: 4).pam).write(to: URL(fileURLWithPath: tools.directory + "/in.pam"))
        try Data(Raster.palette(width: width, height: height).pam).write(to: URL(fileURLWithPath: tools.directory + "/palette.pam"))
        for cover in covers {
            let made = try tools.run(cover.make, output: cover.file)
            try world.server.serve(cover.alter.map { $0(made) } ?? made, at: cover.file)
        }
        return tools
    }

    @Test("Given covers in every format, some broken or hostile, when synced, then each converts to a faithful PNG or fails with its reason")
    func everyFormat() throws {
        let world = try World()
        let tools = try Self.serveCovers(world)
        try world.record("formats.json", "[" + Self.covers.map { world.album($0.title, world.server.url($0.file)) }.joined(separator: ",\n") + "]")
        let daemon = try world.startDaemon()
        let snapshot = try daemon.waitForStatus("every cover cached or failed", timeout: 60) { $0.cached + $0.failed == Self.covers.count }
        var report: [String] = []
        for cover in Self.covers {
            let entry = try #require(snapshot.entries.first { $0.title == cover.title })
            report.append("\(cover.title): \(entry.state) \(entry.error ?? "")")
            switch cover.expected {
            case .failed(let reason):
                #expect(entry.state == "failed" && entry.error?.contains(reason) == true, "\(cover.title): \(entry.error ?? entry.state)")
                #expect(!FileManager.default.fileExists(atPath: world.coverPath(entry.id)))
            case .storedAsServed:
                #expect(entry.state == "cached")
                #expect(readBytes(world.coverPath(entry.id)) == readBytes(tools.directory + "/" + cover.file))
            case .converted(let reference, let tolerance, let format):
                #expect(entry.state == "cached", "\(cover.title): \(entry.error ?? "")")
                let png = try #require(readBytes(world.coverPath(entry.id)))
                let decoded = try tools.decodePNG(png)
                let expected = try Raster(netpbm: tools.run(reference, output: "ref.pnm"))
                let difference = decoded.meanDifference(from: expected)
                #expect(difference <= tolerance, "\(cover.title): mean difference \(difference) from `\(reference)`")
                #expect(PNGChunks.texts(png) == ["Source URL": entry.coverURL, "Source Format": format])
            }
        }
        print(report.joined(separator: "\n"))
        #expect(daemon.isRunning)
        #expect(world.strayFiles().isEmpty)
        let verify = try runCoverd(["verify", "--cache", world.cache])
        #expect(verify.status == 0, "\(verify.stdout)")
        // Independently of coverd: netpbm decodes every stored file.
        for name in try FileManager.default.contentsOfDirectory(atPath: world.cache + "/covers") {
            _ = try tools.decodePNG(readBytes(world.cache + "/covers/" + name) ?? [])
        }
        #expect(try daemon.stop() == 0)
    }

    @Test("Given max_dimension and png_compression in the configuration, when large covers sync, then they are scaled to fit and small PNGs kept")
    func maxDimension() throws {
        let world = try World()
        let tools = ImageTools()
        let big = Raster.pattern(width: 400, height: 300, channels: 3).pam, small = Raster.pattern(width: 60, height: 40, channels: 3).pam
        try world.server.serve(tools.run("cjpeg in.ppm > big.jpg", input: ("in.ppm", big), output: "big.jpg"), at: "big.jpg")
        try world.server.serve(tools.run("pnmtopng in.ppm > big.png", input: ("in.ppm", big), output: "big.png"), at: "big.png")
        let smallPNG = try tools.run("pnmtopng in.ppm > small.png", input: ("in.ppm", small), output: "small.png")
        try world.server.serve(smallPNG, at: "small.png")
        let config = world.directory.file("coverd.toml")
        try writeAtomically("[images]\nmax_dimension = 100\npng_compression = 9\n", to: config)
        #expect(try runCoverd(["check-config", "--config", config]).status == 0)
        try world.record("sizes.json", "[" + ["big.jpg", "big.png", "small.png"].map { world.album($0, world.server.url($0)) }.joined(separator: ",") + "]")
        let daemon = try world.startDaemon(["--config", config])
        let snapshot = try daemon.waitForStatus("three cached", timeout: 30) { $0.cached == 3 }
        for name in ["big.jpg", "big.png"] {
            let entry = try #require(snapshot.entries.first { $0.title == name })
            let png = try #require(readBytes(world.coverPath(entry.id)))
            #expect(PNGChunks.header(png).map { [$0.width, $0.height] } == [100, 75], "\(name)")
        }
        let smallEntry = try #require(snapshot.entries.first { $0.title == "small.png" })
        #expect(readBytes(world.coverPath(smallEntry.id)) == smallPNG)
        #expect(try daemon.stop() == 0)
    }

    @Test("Given large JPEGs being converted, when SIGTERM arrives, then coverd exits 0 leaving no temporary file, only whole covers, and no album failed")
    func stopDuringConversion() throws {
        let world = try World()
        let tools = ImageTools()
        try Data(Raster.pattern(width: 4000, height: 3000, channels: 3).pam).write(to: URL(fileURLWithPath: tools.directory + "/in.ppm"))
        for index in 0..<3 {
            try world.server.serve(tools.run("cjpeg -quality \(80 + index) in.ppm > big\(index).jpg", output: "big\(index).jpg"), at: "big\(index).jpg")
        }
        try world.record("big.json", "[" + (0..<3).map { world.album("Big \($0)", world.server.url("big\($0).jpg")) }.joined(separator: ",") + "]")
        let daemon = try world.startDaemon()
        // Every body has arrived: the conversions (a second or more each) are under way.
        try waitUntil("the three downloads", timeout: 30) { (try? world.server.requests().times.count) == 3 }
        let exitStatus = try daemon.stop()
        #expect(exitStatus == 0, "exit status \(exitStatus); the end of its log: \(daemon.log.suffix(4000))")
        #expect(world.strayFiles().isEmpty)
        let snapshot = try status(cache: world.cache)
        for entry in snapshot.entries {
            let exists = FileManager.default.fileExists(atPath: world.coverPath(entry.id))
            #expect(exists == (entry.state == "cached"), "\(entry.title): \(entry.state), file \(exists)")
            // A conversion given up at the stop is no failure: the album is converted at the next start.
            #expect(entry.state != "failed", "\(entry.title): \(entry.error ?? "")")
            if exists { _ = try tools.decodePNG(readBytes(world.coverPath(entry.id)) ?? []) }
        }
    }
}
