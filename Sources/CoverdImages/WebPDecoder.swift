import CWebP

/// Decodes a WebP (lossy, lossless, with or without alpha; of an animation,
/// the first frame on its canvas) with libwebp.
/// The dimensions come from the bitstream's header and are checked against
/// the limits before the output is allocated; libwebp writes into that
/// buffer and allocates no frame of its own size.
struct WebPDecoder {
    let limits: ImageLimits

    func decode(_ body: [UInt8]) throws(CoverImageError) -> PixelImage {
        try body.withUnsafeBufferPointer { bytes throws(CoverImageError) -> PixelImage in
            var config = WebPDecoderConfig()
            guard WebPInitDecoderConfig(&config) != 0 else { throw .decodeFailed(.webp, "libwebp version mismatch") }
            let status = WebPGetFeatures(bytes.baseAddress, bytes.count, &config.input)
            guard status == VP8_STATUS_OK else { throw .decodeFailed(.webp, WebPDecoder.reason(status)) }
            let features = config.input
            try limits.check(width: Int(features.width), height: Int(features.height), kind: .webp)
            // As for GIF, an animation's cover is its first frame.
            guard features.has_animation == 0 else { return try firstFrame(bytes) }
            let width = Int(features.width), height = Int(features.height)
            let channels = features.has_alpha != 0 ? 4 : 3
            var pixels = [UInt8](repeating: 0, count: width * height * channels)
            let decoded = pixels.withUnsafeMutableBufferPointer { out -> VP8StatusCode in
                config.output.colorspace = channels == 4 ? MODE_RGBA : MODE_RGB
                config.output.is_external_memory = 1
                config.output.u.RGBA.rgba = out.baseAddress
                config.output.u.RGBA.stride = Int32(width * channels)
                config.output.u.RGBA.size = out.count
                let status = WebPDecode(bytes.baseAddress, bytes.count, &config)
                WebPFreeDecBuffer(&config.output)  // Releases nothing of ours (external memory); required by the API.
                return status
            }
            guard decoded == VP8_STATUS_OK else { throw .decodeFailed(.webp, WebPDecoder.reason(decoded)) }
            return PixelImage(width: width, height: height, channels: channels, pixels: pixels)
        }
    }

    /// The first frame of an animation, composed on its canvas (whose size the caller has checked) by libwebp's demuxer.
    private func firstFrame(_ bytes: UnsafeBufferPointer<UInt8>) throws(CoverImageError) -> PixelImage {
        var options = WebPAnimDecoderOptions()
        guard WebPAnimDecoderOptionsInit(&options) != 0 else { throw .decodeFailed(.webp, "libwebp version mismatch") }
        options.color_mode = MODE_RGBA
        options.use_threads = 0
        var data = WebPData(bytes: bytes.baseAddress, size: bytes.count)
        guard let animation = WebPAnimation(&data, &options) else { throw .decodeFailed(.webp, "invalid animation") }
        var info = WebPAnimInfo()
        guard WebPAnimDecoderGetInfo(animation.decoder, &info) != 0 else { throw .decodeFailed(.webp, "invalid animation") }
        var frame: UnsafeMutablePointer<UInt8>?
        var timestamp: Int32 = 0
        guard WebPAnimDecoderGetNext(animation.decoder, &frame, &timestamp) != 0, let frame else {
            throw .decodeFailed(.webp, "cannot decode the first frame (bitstream error or truncated)")
        }
        let width = Int(info.canvas_width), height = Int(info.canvas_height)
        // The frame belongs to the decoder: copied while `animation` is still alive.
        let pixels = withExtendedLifetime(animation) { Array(UnsafeBufferPointer(start: frame, count: width * height * 4)) }
        return PixelImage(width: width, height: height, channels: 4, pixels: pixels)
    }

    static func reason(_ status: VP8StatusCode) -> String {
        switch status {
        case VP8_STATUS_OUT_OF_MEMORY: return "out of memory"
        case VP8_STATUS_INVALID_PARAM: return "invalid parameter"
        case VP8_STATUS_BITSTREAM_ERROR: return "bitstream error"
        case VP8_STATUS_UNSUPPORTED_FEATURE: return "unsupported feature"
        case VP8_STATUS_SUSPENDED: return "suspended"
        case VP8_STATUS_USER_ABORT: return "aborted"
        case VP8_STATUS_NOT_ENOUGH_DATA: return "not enough data (truncated)"
        default: return "error \(status.rawValue)"
        }
    }
}

/// Owns one libwebp animation decoder; deleted in `deinit`. The bytes it reads
/// must outlive it (the caller's buffer scope does).
private final class WebPAnimation {
    let decoder: OpaquePointer

    init?(_ data: UnsafePointer<WebPData>, _ options: UnsafePointer<WebPAnimDecoderOptions>) {
        guard let decoder = WebPAnimDecoderNew(data, options) else { return nil }
        self.decoder = decoder
    }

    deinit { WebPAnimDecoderDelete(decoder) }
}
