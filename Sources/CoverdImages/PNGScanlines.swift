/// The scanlines a PNG's inflated image data holds: how many, and how long
/// each is with its leading filter-type byte, pass by pass (one pass, or the
/// seven of Adam7 interlacing, empty passes left out as decoders leave them).
struct PNGScanlines {
    struct Pass {
        var rows: Int
        /// Bytes from one row's filter-type byte to the next's.
        var stride: Int
    }

    let passes: [Pass]

    init(_ info: PNGInfo) {
        let channels = [0: 1, 2: 3, 3: 1, 4: 2, 6: 4][info.colorType] ?? 1
        let bitsPerPixel = channels * info.bitDepth
        func pass(width: Int, height: Int) -> Pass? {
            guard width > 0, height > 0 else { return nil }
            return Pass(rows: height, stride: 1 + (width * bitsPerPixel + 7) / 8)
        }
        guard info.interlaced else {
            passes = [pass(width: info.width, height: info.height)].compactMap { $0 }
            return
        }
        // Adam7: each pass's first column and row, and its steps across and down.
        let adam7 = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]
        passes = adam7.compactMap { x, y, dx, dy in
            pass(width: (info.width - x + dx - 1) / dx, height: (info.height - y + dy - 1) / dy)
        }
    }

    /// Bytes of inflated image data the header implies.
    var byteCount: Int { passes.reduce(0) { $0 + $1.rows * $1.stride } }

    /// Scanlines in all passes.
    var count: Int { passes.reduce(0) { $0 + $1.rows } }
}

/// Checks that every scanline starts with a filter type a decoder knows (0 to
/// 4: none, sub, up, average, Paeth), fed the inflated bytes in order, whole
/// or in pieces of any size. libpng ("bad adaptive filter value"), Pillow and
/// browsers refuse an image with any other, however sound its zlib stream.
struct ScanlineFilterCheck {
    private let scanlines: PNGScanlines
    private let total: Int
    private var pass = 0
    private var rowInPass = 0
    private var scanline = 0
    /// Bytes still to go by before the next filter-type byte; `Int.max` once every row has been seen.
    private var distance = 0

    init(_ scanlines: PNGScanlines) {
        self.scanlines = scanlines
        total = scanlines.count
        if scanlines.passes.isEmpty { distance = .max }
    }

    mutating func consume(_ bytes: UnsafeRawBufferPointer) throws(PNGValidationError) {
        var index = 0
        while distance < bytes.count - index {
            index += distance
            let filter = bytes[index]
            scanline += 1
            guard filter <= 4 else {
                throw .structure("scanline \(scanline) of \(total) has filter type \(filter) (PNG allows 0 to 4)")
            }
            let current = scanlines.passes[pass]
            rowInPass += 1
            if rowInPass == current.rows {
                pass += 1
                rowInPass = 0
            }
            // The row's own bytes, then the next row's filter byte, if there is one.
            distance = pass < scanlines.passes.count ? current.stride : .max
        }
        if distance != .max { distance -= bytes.count - index }
    }
}
