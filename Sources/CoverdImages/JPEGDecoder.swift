import CJPEG

/// Decodes a JPEG with libjpeg-turbo: baseline and progressive, gray, YCbCr,
/// CMYK and YCCK (to RGB), with the EXIF orientation read for the caller. The
/// header is read first and checked against the limits before any pixel is
/// allocated; libjpeg's own memory is capped from the header too. When the result will be scaled down,
/// libjpeg's DCT scaling decodes at the smallest eighth that is still at least
/// twice the target: cheap, and it leaves the resampler enough pixels to
/// filter well (a DCT scale straight to the target is visibly blockier).
/// Pixels to be scaled are decoded straight into the resampler's pixman
/// surface; the others come back packed, as the encoder takes them.
struct JPEGDecoder {
    let limits: ImageLimits
    /// Progressive scans allowed: real files have about ten (cjpeg writes at
    /// most 100); thousands of tiny scans are a decode-time bomb.
    var maxScans = 200
    /// Looked at between batches of rows.
    var cancellation: ConversionCancellation?
    /// Rows read between looks at `cancellation`.
    private static let rowsPerLook: UInt32 = 32

    /// `maxDimension`: the caller will scale the result to fit this per side, so
    /// libjpeg may decode at a smaller scale. The image comes back as stored
    /// (the caller applies `orientation` after scaling, on fewer pixels).
    func decode(_ body: [UInt8], maxDimension: Int? = nil) throws(CoverImageError) -> DecodedImage {
        try body.withUnsafeBufferPointer { bytes throws(CoverImageError) -> DecodedImage in
            guard let jpeg = JPEGHandle() else { throw .decodeFailed(.jpeg, "cannot start libjpeg") }
            jpeg.state.pointee.max_scans = Int32(maxScans)
            return try decode(bytes, with: jpeg, maxDimension: maxDimension)
        }
    }

    private func decode(
        _ bytes: UnsafeBufferPointer<UInt8>, with jpeg: JPEGHandle, maxDimension: Int?
    ) throws(CoverImageError) -> DecodedImage {
        // libjpeg checks its cap only when it sizes whole-image buffers (in start), so the
        // header is read uncapped; saved APP1 segments are bounded by the body's size.
        try jpeg.check(coverd_jpeg_read_header(jpeg.state, bytes.baseAddress, UInt(bytes.count), Int.max / 2))
        let info = jpeg.state.pointee.info
        let (imageWidth, imageHeight) = (Int(info.image_width), Int(info.image_height))
        try limits.check(width: imageWidth, height: imageHeight, kind: .jpeg)
        // Enough for whole-image coefficient buffers (progressive and multi-scan files:
        // 2 bytes per coefficient, per component, padded to 16-pixel blocks), working rows,
        // and what is already allocated (the saved APP1 segments count against the cap).
        let components = Int(info.num_components)
        jpeg.state.pointee.info.mem.pointee.max_memory_to_use =
            components * 2 * (imageWidth + 16) * (imageHeight + 16) + bytes.count + (32 << 20)
        let orientation = exifOrientation(jpeg)
        let shown = orientation >= 5 ? (imageHeight, imageWidth) : (imageWidth, imageHeight)
        let target = maxDimension.map { ImageResampler.fitting(width: shown.0, height: shown.1, maxDimension: $0) }
        // Pixels the resampler will scale are decoded straight into pixman's layout; the rest stay packed for the encoder.
        let scaled = target.map { DecodedImage.stored($0, orientation: orientation) != (imageWidth, imageHeight) } ?? false
        let source = info.jpeg_color_space
        let output: J_COLOR_SPACE
        switch source {
        // Gray stays one channel even when scaled (pixman's a8): BGRA would filter four times the bytes, then fold back to gray.
        case JCS_GRAYSCALE: output = JCS_GRAYSCALE
        case JCS_CMYK, JCS_YCCK: output = JCS_CMYK
        default: output = scaled ? JPEGDecoder.pixmanColorSpace : JCS_RGB
        }
        let eighths = JPEGDecoder.eighths(width: imageWidth, height: imageHeight, orientation: orientation, fitting: target)
        try jpeg.check(coverd_jpeg_start(jpeg.state, UInt32(eighths), 8, output))
        let started = jpeg.state.pointee.info
        let width = Int(started.output_width), height = Int(started.output_height), channels = Int(started.output_components)
        // Adobe's APP14 marks CMYK stored inverted, as Photoshop writes it.
        let inverted = started.saw_Adobe_marker != 0
        if scaled {
            let surface = try readSurface(jpeg, width: width, height: height, channels: output == JCS_GRAYSCALE ? 1 : 3)
            try jpeg.check(coverd_jpeg_finish(jpeg.state))
            if output == JCS_CMYK { JPEGDecoder.convertCMYK(in: surface, inverted: inverted) }
            return DecodedImage(.pixman(surface), orientation: orientation, shownWidth: shown.0, shownHeight: shown.1)
        }
        // libjpeg writes every byte (or fails, and the buffer is dropped): no zeroing pass first.
        var failure: CoverImageError?
        var pixels = [UInt8](unsafeUninitializedCapacity: width * height * channels) { buffer, initialized in
            defer { initialized = failure == nil ? buffer.count : 0 }
            do throws(CoverImageError) {
                try readRows(jpeg, into: buffer.baseAddress, stride: width * channels)
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
        try jpeg.check(coverd_jpeg_finish(jpeg.state))
        let image: PixelImage
        if output == JCS_CMYK {
            let rgb = JPEGDecoder.rgb(fromCMYK: pixels, inverted: inverted)
            pixels = []
            image = PixelImage(width: width, height: height, channels: 3, pixels: rgb)
        } else {
            image = PixelImage(width: width, height: height, channels: channels, pixels: pixels)
        }
        return DecodedImage(image: image, orientation: orientation, shownWidth: shown.0, shownHeight: shown.1)
    }

    /// libjpeg-turbo's name for the bytes of pixman's a8r8g8b8 words in memory, alpha set to 255 (BGRX's fourth byte is undefined).
    private static var pixmanColorSpace: J_COLOR_SPACE {
        #if _endian(little)
        JCS_EXT_BGRA
        #else
        JCS_EXT_ARGB
        #endif
    }

    /// Reads every output row, `stride` bytes apart, looking at `cancellation` before each batch of rows.
    private func readRows(_ jpeg: JPEGHandle, into buffer: UnsafeMutablePointer<UInt8>?, stride: Int) throws(CoverImageError) {
        while jpeg.state.pointee.info.output_scanline < jpeg.state.pointee.info.output_height {
            try cancellation?.check()
            try jpeg.check(coverd_jpeg_read_rows(jpeg.state, buffer, stride, JPEGDecoder.rowsPerLook))
        }
    }

    /// Reads every row into a new pixman surface (a8 for gray, a8r8g8b8 otherwise; CMYK still to convert) for the resampler.
    private func readSurface(_ jpeg: JPEGHandle, width: Int, height: Int, channels: Int) throws(CoverImageError) -> PixmanSurface {
        guard let surface = PixmanSurface(channels: channels, width: width, height: height) else {
            throw .decodeFailed(.jpeg, "cannot allocate \(width)×\(height) pixels to decode into")
        }
        // The rows are sized from the colour space asked for; a mismatch must not write past them.
        let components = Int(jpeg.state.pointee.info.output_components)
        guard components == (channels == 1 ? 1 : 4) else { throw .decodeFailed(.jpeg, "libjpeg gave \(components) components a pixel") }
        // libjpeg writes every row (or fails, and the surface is dropped unread): no zeroing pass first.
        try readRows(jpeg, into: surface.bits.assumingMemoryBound(to: UInt8.self), stride: surface.stride)
        return surface
    }

    /// The orientation from the first APP1 segment that is Exif (XMP also lives in APP1), read in place.
    private func exifOrientation(_ jpeg: JPEGHandle) -> Int {
        var marker = jpeg.state.pointee.info.marker_list
        while let current = marker {
            if current.pointee.marker == 0xE1, let data = current.pointee.data {
                let segment = UnsafeRawBufferPointer(start: data, count: Int(current.pointee.data_length))
                if segment.starts(with: Array("Exif".utf8) + [0, 0]) { return ExifOrientation.read(segment) }
            }
            marker = current.pointee.next
        }
        return 1
    }

    /// The scale, in eighths (1–8), that decodes to at least twice the target (as displayed, after orientation).
    static func eighths(width: Int, height: Int, orientation: Int, fitting target: (width: Int, height: Int)?) -> Int {
        guard let target else { return 8 }
        let (shownWidth, shownHeight) = orientation >= 5 ? (height, width) : (width, height)
        for eighths in 1...8 where (shownWidth * eighths + 7) / 8 >= 2 * target.width && (shownHeight * eighths + 7) / 8 >= 2 * target.height {
            return eighths
        }
        return 8
    }

    /// CMYK to RGB without a colour profile, as browsers and ImageMagick do.
    static func rgb(fromCMYK cmyk: [UInt8], inverted: Bool) -> [UInt8] {
        let count = cmyk.count / 4
        var rgb = [UInt8](repeating: 0, count: count * 3)
        for index in 0..<count {
            let (r, g, b) = JPEGDecoder.rgb(cmyk[index * 4], cmyk[index * 4 + 1], cmyk[index * 4 + 2], cmyk[index * 4 + 3], inverted: inverted)
            rgb[index * 3] = r
            rgb[index * 3 + 1] = g
            rgb[index * 3 + 2] = b
        }
        return rgb
    }

    /// CMYK rows read into a colour surface become opaque a8r8g8b8 in place: four bytes in, one word out.
    static func convertCMYK(in surface: PixmanSurface, inverted: Bool) {
        for y in 0..<surface.height {
            let row = surface.bits + y * surface.stride
            for x in 0..<surface.width {
                let at = x * 4
                let (r, g, b) = JPEGDecoder.rgb(
                    row.load(fromByteOffset: at, as: UInt8.self), row.load(fromByteOffset: at + 1, as: UInt8.self),
                    row.load(fromByteOffset: at + 2, as: UInt8.self), row.load(fromByteOffset: at + 3, as: UInt8.self), inverted: inverted)
                row.storeBytes(of: 0xFF00_0000 | UInt32(r) << 16 | UInt32(g) << 8 | UInt32(b), toByteOffset: at, as: UInt32.self)
            }
        }
    }

    /// One CMYK pixel as RGB. Inverted values are (1 - ink): each channel is (1 - ink) × (1 - black).
    @inline(__always)
    private static func rgb(_ cyan: UInt8, _ magenta: UInt8, _ yellow: UInt8, _ black: UInt8, inverted: Bool) -> (UInt8, UInt8, UInt8) {
        var c = Int(cyan), m = Int(magenta), y = Int(yellow), k = Int(black)
        if !inverted { (c, m, y, k) = (255 - c, 255 - m, 255 - y, 255 - k) }
        return (UInt8((c * k + 127) / 255), UInt8((m * k + 127) / 255), UInt8((y * k + 127) / 255))
    }
}

/// Owns one libjpeg decompressor (and its error state); destroyed in `deinit`.
private final class JPEGHandle {
    let state: UnsafeMutablePointer<coverd_jpeg>

    init?() {
        guard let state = coverd_jpeg_create() else { return nil }
        self.state = state
    }

    deinit { coverd_jpeg_destroy(state) }

    /// Turns a shim's -1 into libjpeg's own message.
    func check(_ code: Int32) throws(CoverImageError) {
        guard code != 0 else { return }
        let message = withUnsafeBytes(of: state.pointee.message) { raw in
            String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
        }
        throw .decodeFailed(.jpeg, message.isEmpty ? "libjpeg failed" : message)
    }
}
