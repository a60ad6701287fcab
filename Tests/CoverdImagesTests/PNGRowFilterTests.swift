@testable import CoverdImages
import Testing

/// The row filter against the PNG specification's own definitions (section
/// 9): each candidate undone by the spec's reconstruction gives the row back,
/// and the one chosen has libpng's minimum sum of absolute values.
@Suite("PNG row filters")
struct PNGRowFilterTests {
    /// The specification's reconstruction of one filtered row, given the reconstructed row above.
    static func unfilter(_ filtered: [UInt8], above: [UInt8], bytesPerPixel bpp: Int) -> [UInt8] {
        let kind = filtered[0]
        var row = Array(filtered.dropFirst())
        for index in row.indices {
            let a = index >= bpp ? Int(row[index - bpp]) : 0, b = Int(above[index]), c = index >= bpp ? Int(above[index - bpp]) : 0
            let predicted: Int
            switch kind {
            case 0: predicted = 0
            case 1: predicted = a
            case 2: predicted = b
            case 3: predicted = (a + b) / 2
            default:
                let p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c)
                predicted = pa <= pb && pa <= pc ? a : (pb <= pc ? b : c)
            }
            row[index] = row[index] &+ UInt8(predicted & 0xFF)
        }
        return row
    }

    static func signedSum(_ bytes: ArraySlice<UInt8>) -> Int { bytes.reduce(0) { $0 + ($1 < 128 ? Int($1) : 256 - Int($1)) } }

    /// Every filter of `row`, by the specification, for comparison with the choice.
    static func everyFilter(_ row: [UInt8], above: [UInt8], bytesPerPixel bpp: Int) -> [[UInt8]] {
        (0...4).map { kind in
            row.indices.map { index in
                let a = index >= bpp ? Int(row[index - bpp]) : 0, b = Int(above[index]), c = index >= bpp ? Int(above[index - bpp]) : 0
                let p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c)
                let predicted = [0, a, b, (a + b) / 2, pa <= pb && pa <= pc ? a : (pb <= pc ? b : c)][kind]
                return row[index] &- UInt8(predicted & 0xFF)
            }
        }
    }

    @Test("Given random rows of 1, 3 and 4 bytes a pixel, when filtered, then the spec's reconstruction gives each row back and the choice has the least sum",
          arguments: [1, 3, 4])
    func roundTripAndChoice(bytesPerPixel: Int) {
        var seed: UInt32 = 12345
        func byte(smooth previous: UInt8) -> UInt8 {
            seed = seed &* 1_103_515_245 &+ 12345
            // Some rows smooth, some noisy, some flat, so different filters win.
            return seed >> 28 < 10 ? previous &+ UInt8(seed >> 24 & 3) : UInt8(seed >> 16 & 0xFF)
        }
        let width = 53, rowBytes = width * bytesPerPixel
        let filter = PNGRowFilter(rowBytes: rowBytes, bytesPerPixel: bytesPerPixel)
        var above = [UInt8](repeating: 0, count: rowBytes)
        var chosen = Set<UInt8>()
        for y in 0..<200 {
            var row = [UInt8](repeating: 0, count: rowBytes)
            for index in row.indices {
                switch y % 4 {
                case 0: row[index] = above[index]  // the row above again: up wins
                case 1: row[index] = 200  // flat: sub wins
                case 2: row[index] = UInt8(truncatingIfNeeded: index * 37 ^ y)  // busy
                default: row[index] = byte(smooth: index >= bytesPerPixel ? row[index - bytesPerPixel] : above[index])
                }
            }
            var output = [UInt8](repeating: 0xEE, count: rowBytes + 1)
            row.withUnsafeBufferPointer { current in
                above.withUnsafeBufferPointer { previous in
                    output.withUnsafeMutableBufferPointer {
                        filter.filter(current.baseAddress!, previous: y == 0 ? nil : previous.baseAddress!, adaptive: true, into: $0.baseAddress!)
                    }
                }
            }
            let reference = y == 0 ? [UInt8](repeating: 0, count: rowBytes) : above
            #expect(Self.unfilter(output, above: reference, bytesPerPixel: bytesPerPixel) == row, "row \(y)")
            let sums = Self.everyFilter(row, above: reference, bytesPerPixel: bytesPerPixel).map { Self.signedSum($0[...]) }
            #expect(Self.signedSum(output[1...]) == sums.min(), "row \(y): filter \(output[0]) is not the least sum \(sums)")
            #expect(sums.firstIndex(of: sums.min()!) == Int(output[0]), "ties go to the earlier filter, as libpng's do")
            chosen.insert(output[0])
            above = row
        }
        #expect(chosen.count >= 3, "the rows exercise several filters: \(chosen.sorted())")
    }

    @Test("Given adaptive filtering off (compression level 0), when a row is filtered, then it is written as it is, type none")
    func unfiltered() {
        let filter = PNGRowFilter(rowBytes: 6, bytesPerPixel: 3)
        let row: [UInt8] = [1, 2, 3, 250, 251, 252]
        var output = [UInt8](repeating: 0xEE, count: 7)
        row.withUnsafeBufferPointer { current in
            output.withUnsafeMutableBufferPointer { filter.filter(current.baseAddress!, previous: nil, adaptive: false, into: $0.baseAddress!) }
        }
        #expect(output == [0] + row)
    }
}
