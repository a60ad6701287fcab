/// Chooses and applies each scanline's PNG filter (none, sub, up, average or
/// Paeth) by libpng's heuristic: the filter whose output, read as signed
/// bytes, has the smallest sum of absolute values. That keeps the size of
/// libpng's output at the same compression; every candidate is computed in
/// its own tight loop so the compiler can vectorise it.
///
/// Not thread-safe: one filter per encode, its scratch rows reused row after row.
final class PNGRowFilter {
    /// PNG's filter-type bytes.
    enum Kind: UInt8 { case none = 0, sub, up, average, paeth }

    let rowBytes: Int
    let bytesPerPixel: Int
    /// Scratch for the sub, up, average and Paeth candidates, in that order.
    private let candidates: UnsafeMutablePointer<UInt8>
    /// The row above the first (PNG treats it as zeros).
    private let zeros: UnsafeMutablePointer<UInt8>

    init(rowBytes: Int, bytesPerPixel: Int) {
        // Sums are 32-bit (128 at most a byte); images.max_side keeps rows far below this.
        precondition(rowBytes <= Int(UInt32.max) / 128, "a row of \(rowBytes) bytes is beyond the filter's sums")
        self.rowBytes = rowBytes
        self.bytesPerPixel = bytesPerPixel
        candidates = .allocate(capacity: max(1, 4 * rowBytes))
        zeros = .allocate(capacity: max(1, rowBytes))
        zeros.initialize(repeating: 0, count: max(1, rowBytes))
    }

    deinit {
        candidates.deallocate()
        zeros.deallocate()
    }

    /// Writes the filter-type byte and the filtered `row` to `output` (`rowBytes + 1` bytes).
    /// `previous` is the unfiltered row above, nil for the first; `adaptive` false writes the row unfiltered.
    func filter(_ row: UnsafePointer<UInt8>, previous: UnsafePointer<UInt8>?, adaptive: Bool, into output: UnsafeMutablePointer<UInt8>) {
        guard adaptive, rowBytes > 0 else {
            output.pointee = Kind.none.rawValue
            (output + 1).update(from: row, count: rowBytes)
            return
        }
        let above = previous ?? UnsafePointer(zeros)
        let sums = (
            PNGRowFilter.absoluteSum(row, count: rowBytes),
            sub(row, into: candidates),
            up(row, above: above, into: candidates + rowBytes),
            average(row, above: above, into: candidates + 2 * rowBytes),
            paeth(row, above: above, into: candidates + 3 * rowBytes)
        )
        var best = (kind: Kind.none, sum: sums.0)
        // Strictly smaller: ties keep the earlier filter, as libpng does.
        if sums.1 < best.sum { best = (.sub, sums.1) }
        if sums.2 < best.sum { best = (.up, sums.2) }
        if sums.3 < best.sum { best = (.average, sums.3) }
        if sums.4 < best.sum { best = (.paeth, sums.4) }
        output.pointee = best.kind.rawValue
        if best.kind == .none {
            (output + 1).update(from: row, count: rowBytes)
        } else {
            (output + 1).update(from: candidates + (Int(best.kind.rawValue) - 1) * rowBytes, count: rowBytes)
        }
    }

    /// The sum of the bytes read as signed values' magnitudes (128 counts 128).
    static func absoluteSum(_ bytes: UnsafePointer<UInt8>, count: Int) -> UInt32 {
        var sum: UInt32 = 0
        for index in 0..<count { sum &+= magnitude(bytes[index]) }
        return sum
    }

    @inline(__always)
    private static func magnitude(_ byte: UInt8) -> UInt32 {
        UInt32(byte < 128 ? byte : (0 as UInt8) &- byte)
    }

    private func sub(_ row: UnsafePointer<UInt8>, into out: UnsafeMutablePointer<UInt8>) -> UInt32 {
        let bpp = min(bytesPerPixel, rowBytes)
        var sum: UInt32 = 0
        for index in 0..<bpp {
            out[index] = row[index]
            sum &+= PNGRowFilter.magnitude(row[index])
        }
        // Pointers offset by one pixel, so the loop indexes without checked subtraction (which stops vectorising).
        let current = row + bpp, target = out + bpp
        for index in 0..<(rowBytes - bpp) {
            let value = current[index] &- row[index]
            target[index] = value
            sum &+= PNGRowFilter.magnitude(value)
        }
        return sum
    }

    private func up(_ row: UnsafePointer<UInt8>, above: UnsafePointer<UInt8>, into out: UnsafeMutablePointer<UInt8>) -> UInt32 {
        var sum: UInt32 = 0
        for index in 0..<rowBytes {
            let value = row[index] &- above[index]
            out[index] = value
            sum &+= PNGRowFilter.magnitude(value)
        }
        return sum
    }

    private func average(_ row: UnsafePointer<UInt8>, above: UnsafePointer<UInt8>, into out: UnsafeMutablePointer<UInt8>) -> UInt32 {
        let bpp = min(bytesPerPixel, rowBytes)
        var sum: UInt32 = 0
        for index in 0..<bpp {
            let value = row[index] &- above[index] >> 1
            out[index] = value
            sum &+= PNGRowFilter.magnitude(value)
        }
        let current = row + bpp, currentAbove = above + bpp, target = out + bpp
        for index in 0..<(rowBytes - bpp) {
            let predicted = UInt8(truncatingIfNeeded: (UInt16(row[index]) &+ UInt16(currentAbove[index])) >> 1)
            let value = current[index] &- predicted
            target[index] = value
            sum &+= PNGRowFilter.magnitude(value)
        }
        return sum
    }

    private func paeth(_ row: UnsafePointer<UInt8>, above: UnsafePointer<UInt8>, into out: UnsafeMutablePointer<UInt8>) -> UInt32 {
        let bpp = min(bytesPerPixel, rowBytes)
        var sum: UInt32 = 0
        // With nothing to the left, Paeth predicts from the row above.
        for index in 0..<bpp {
            let value = row[index] &- above[index]
            out[index] = value
            sum &+= PNGRowFilter.magnitude(value)
        }
        let current = row + bpp, currentAbove = above + bpp, target = out + bpp
        for index in 0..<(rowBytes - bpp) {
            let left = Int16(row[index]), up = Int16(currentAbove[index]), corner = Int16(above[index])
            let towardLeft = up &- corner, towardUp = left &- corner, towardCorner = towardLeft &+ towardUp
            // Wrapping magnitudes (no overflow traps): the loop stays branch-free, so it vectorises.
            let distanceLeft = towardLeft < 0 ? 0 &- towardLeft : towardLeft
            let distanceUp = towardUp < 0 ? 0 &- towardUp : towardUp
            let distanceCorner = towardCorner < 0 ? 0 &- towardCorner : towardCorner
            let predicted = distanceLeft <= distanceUp && distanceLeft <= distanceCorner ? left : (distanceUp <= distanceCorner ? up : corner)
            let value = current[index] &- UInt8(truncatingIfNeeded: predicted)
            target[index] = value
            sum &+= PNGRowFilter.magnitude(value)
        }
        return sum
    }
}
