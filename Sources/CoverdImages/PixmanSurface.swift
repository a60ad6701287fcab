import CPixman

/// Owns one pixman image and the pixel memory under it (pixman does not copy
/// it); both are released in `deinit`. Gray is a8; colour is a8r8g8b8,
/// premultiplied: one native-endian word a pixel, so a little-endian machine
/// holds B, G, R, A in memory (libjpeg-turbo's JCS_EXT_BGRA). Rows are padded
/// to 4 bytes as pixman requires. The memory starts uninitialized: whoever
/// fills it (`load`, the JPEG decoder, pixman) writes every pixel.
final class PixmanSurface {
    let image: OpaquePointer
    let bits: UnsafeMutableRawPointer
    let width: Int, height: Int, stride: Int
    /// The layout the pixels come from and go back to: 1 gray, 3 RGB (alpha 255 throughout), 4 RGBA.
    let channels: Int
    let format: pixman_format_code_t

    init?(channels: Int, width: Int, height: Int) {
        self.channels = channels
        format = channels == 1 ? PIXMAN_a8 : PIXMAN_a8r8g8b8
        stride = (width * (channels == 1 ? 1 : 4) + 3) & ~3
        self.width = width
        self.height = height
        bits = UnsafeMutableRawPointer.allocate(byteCount: max(4, stride * height), alignment: 16)
        guard let image = pixman_image_create_bits(
            format, Int32(width), Int32(height), bits.assumingMemoryBound(to: UInt32.self), Int32(stride))
        else {
            bits.deallocate()
            return nil
        }
        self.image = image
    }

    deinit {
        pixman_image_unref(image)
        bits.deallocate()
    }

    /// Gray goes in as a8; RGB as opaque ARGB; RGBA premultiplied (pixman's native form).
    func load(_ source: PixelImage) {
        precondition(source.width == width && source.height == height && source.channels == channels, "surface does not match the pixels")
        source.pixels.withUnsafeBufferPointer { pixels in
            for y in 0..<height {
                let row = bits + y * stride
                let from = y * width * source.channels
                if source.channels == 1 {
                    row.copyMemory(from: pixels.baseAddress! + from, byteCount: width)
                    continue
                }
                let words = row.assumingMemoryBound(to: UInt32.self)
                for x in 0..<width {
                    let at = from + x * source.channels
                    var r = UInt32(pixels[at]), g = UInt32(pixels[at + 1]), b = UInt32(pixels[at + 2])
                    let a: UInt32 = source.channels == 4 ? UInt32(pixels[at + 3]) : 255
                    if a != 255 { (r, g, b) = ((r * a + 127) / 255, (g * a + 127) / 255, (b * a + 127) / 255) }
                    words[x] = a << 24 | r << 16 | g << 8 | b
                }
            }
        }
    }

    /// Back to straight (un-premultiplied) channels in the layout the pixels came from.
    func unload() -> PixelImage {
        var out = [UInt8](repeating: 0, count: width * height * channels)
        out.withUnsafeMutableBufferPointer { pixels in
            for y in 0..<height {
                let row = bits + y * stride
                let to = y * width * channels
                if channels == 1 {
                    UnsafeMutableRawPointer(pixels.baseAddress! + to).copyMemory(from: row, byteCount: width)
                    continue
                }
                let words = row.assumingMemoryBound(to: UInt32.self)
                for x in 0..<width {
                    let word = words[x], at = to + x * channels
                    let a = word >> 24
                    var r = word >> 16 & 0xFF, g = word >> 8 & 0xFF, b = word & 0xFF
                    if channels == 4 {
                        if a == 0 {
                            (r, g, b) = (0, 0, 0)
                        } else if a != 255 {
                            (r, g, b) = (min(255, (r * 255 + a / 2) / a), min(255, (g * 255 + a / 2) / a), min(255, (b * 255 + a / 2) / a))
                        }
                        pixels[at + 3] = UInt8(a)
                    }
                    pixels[at] = UInt8(r)
                    pixels[at + 1] = UInt8(g)
                    pixels[at + 2] = UInt8(b)
                }
            }
        }
        return PixelImage(width: width, height: height, channels: channels, pixels: out)
    }
}
