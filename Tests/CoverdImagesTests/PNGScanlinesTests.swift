@testable import CoverdImages
import CoverdTestSupport
import Testing

/// The scanlines of a PNG's inflated data, and the check of their filter
/// types as the bytes go by in pieces of any size.
@Suite("PNG scanlines and their filter types")
struct PNGScanlinesTests {
    /// 11×7 RGBA, Adam7: every pass has rows. Worked out by hand from the
    /// passes' origins and steps: (rows, bytes per row with its filter byte).
    static let info = PNGInfo(width: 11, height: 7, bitDepth: 8, colorType: 6, interlaced: true)
    static let passes = [(1, 9), (1, 5), (1, 13), (2, 13), (2, 25), (4, 21), (3, 45)]

    /// Where each scanline's filter byte is, from the hand-made table.
    static var filterOffsets: [Int] {
        var offsets: [Int] = []
        var offset = 0
        for (rows, stride) in passes {
            for _ in 0..<rows {
                offsets.append(offset)
                offset += stride
            }
        }
        return offsets
    }

    func feed(_ bytes: [UInt8], inPiecesOf size: Int) throws(PNGValidationError) {
        var check = ScanlineFilterCheck(PNGScanlines(Self.info))
        var start = 0
        while start < bytes.count {
            let end = min(start + size, bytes.count)
            let piece = Array(bytes[start..<end])
            let result: Result<Void, PNGValidationError> = piece.withUnsafeBytes { raw in
                do throws(PNGValidationError) { try check.consume(raw) } catch { return .failure(error) }
                return .success(())
            }
            try result.get()
            start = end
        }
    }

    @Test("Given an Adam7 image with every pass present, when its scanlines are counted, then they match the passes worked out by hand")
    func adam7Geometry() {
        let scanlines = PNGScanlines(Self.info)
        #expect(scanlines.passes.map { [$0.rows, $0.stride] } == Self.passes.map { [$0.0, $0.1] })
        #expect(scanlines.count == 14)
        #expect(scanlines.byteCount == 322)
    }

    @Test("Given valid filter types fed in pieces of every size from 1 byte to two rows, when checked, then all pass")
    func validInPiecesOfEverySize() throws {
        var rows = [UInt8](repeating: 0xFF, count: 322)  // Pixel bytes that are no filter type.
        for (index, offset) in Self.filterOffsets.enumerated() { rows[offset] = UInt8(index % 5) }
        for size in 1...(2 * 45 + 1) {
            #expect(throws: Never.self, "pieces of \(size)") { try feed(rows, inPiecesOf: size) }
        }
    }

    @Test("Given one bad filter type, first, in the middle or last, fed in pieces of every size, when checked, then it is found at its scanline")
    func badFilterFoundWhateverThePieces() {
        let offsets = Self.filterOffsets
        for bad in [0, 6, offsets.count - 1] {
            var rows = [UInt8](repeating: 0, count: 322)
            rows[offsets[bad]] = 5
            for size in 1...(2 * 45 + 1) {
                #expect(throws: PNGValidationError.structure("scanline \(bad + 1) of 14 has filter type 5 (PNG allows 0 to 4)"),
                        "pieces of \(size)") { try feed(rows, inPiecesOf: size) }
            }
        }
    }

    @Test("Given a 1,500×2,000 Adam7 image (9,003,750 bytes of rows, inflated through zlib's scratch buffer), when its last scanline's filter type is bad, then it is refused; with none bad, it passes")
    func streamedAdam7() throws {
        let validator = PNGValidator()
        func png(_ rows: [UInt8]) -> [UInt8] {
            let header = PNGFixture.bigEndianForTests(1_500) + PNGFixture.bigEndianForTests(2_000) + [8, 2, 0, 0, 1]
            return PNGFixture.signature + PNGFixture.chunk("IHDR", header)
                + PNGFixture.chunk("IDAT", PNGFixture.zlibStoredForTests(rows)) + PNGFixture.chunk("IEND", [])
        }
        var rows = [UInt8](repeating: 0, count: 9_003_750)
        #expect(rows.count > PNGImageData.inMemoryLimit, "inflated through zlib's scratch buffer")
        #expect(try validator.validate(png(rows)).interlaced)
        rows[rows.count - 4_501] = 7  // The seventh pass's last row: 1,500 RGB pixels and its filter byte.
        #expect(throws: PNGValidationError.structure("scanline 3750 of 3750 has filter type 7 (PNG allows 0 to 4)")) {
            try validator.validate(png(rows))
        }
    }
}
