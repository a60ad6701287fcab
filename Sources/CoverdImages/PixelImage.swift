/// Decoded pixels: 8 bits per channel, rows packed without padding. One
/// channel is gray, three RGB, four RGBA (straight, not premultiplied).
public struct PixelImage: Sendable, Equatable {
    public var width: Int
    public var height: Int
    public var channels: Int
    public var pixels: [UInt8]

    public init(width: Int, height: Int, channels: Int, pixels: [UInt8]) {
        precondition(pixels.count == width * height * channels, "pixel buffer does not match \(width)×\(height)×\(channels)")
        self.width = width
        self.height = height
        self.channels = channels
        self.pixels = pixels
    }

    /// True when every pixel's alpha is 255: the alpha channel can be dropped.
    var isOpaque: Bool {
        guard channels == 4 else { return true }
        return stride(from: 3, to: pixels.count, by: 4).allSatisfy { pixels[$0] == 255 }
    }

    /// The same pixels without the alpha channel (RGBA to RGB).
    func droppingAlpha() -> PixelImage {
        guard channels == 4 else { return self }
        var rgb = [UInt8](repeating: 0, count: width * height * 3)
        rgb.withUnsafeMutableBufferPointer { out in
            pixels.withUnsafeBufferPointer { source in
                for index in 0..<(width * height) {
                    out[index * 3] = source[index * 4]
                    out[index * 3 + 1] = source[index * 4 + 1]
                    out[index * 3 + 2] = source[index * 4 + 2]
                }
            }
        }
        return PixelImage(width: width, height: height, channels: 3, pixels: rgb)
    }

    /// The image as EXIF `orientation` (1–8) says it is to be displayed.
    func oriented(_ orientation: Int) -> PixelImage {
        guard (2...8).contains(orientation) else { return self }
        let swaps = orientation >= 5
        let outWidth = swaps ? height : width
        let outHeight = swaps ? width : height
        var out = [UInt8](repeating: 0, count: pixels.count)
        let w = width, h = height, c = channels
        out.withUnsafeMutableBufferPointer { target in
            pixels.withUnsafeBufferPointer { source in
                for y in 0..<outHeight {
                    for x in 0..<outWidth {
                        // Where the displayed pixel (x, y) is stored.
                        let (sx, sy): (Int, Int)
                        switch orientation {
                        case 2: (sx, sy) = (w - 1 - x, y)
                        case 3: (sx, sy) = (w - 1 - x, h - 1 - y)
                        case 4: (sx, sy) = (x, h - 1 - y)
                        case 5: (sx, sy) = (y, x)
                        case 6: (sx, sy) = (y, h - 1 - x)
                        case 7: (sx, sy) = (w - 1 - y, h - 1 - x)
                        default: (sx, sy) = (w - 1 - y, x)  // 8
                        }
                        let from = (sy * w + sx) * c
                        let to = (y * outWidth + x) * c
                        for channel in 0..<c { target[to + channel] = source[from + channel] }
                    }
                }
            }
        }
        return PixelImage(width: outWidth, height: outHeight, channels: channels, pixels: out)
    }
}
