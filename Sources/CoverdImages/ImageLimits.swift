/// Limits on images, checked from headers before any pixel is touched.
public struct ImageLimits: Sendable, Equatable {
    public var maxSide = 16_384
    public var maxPixels = 50_000_000

    public init() {}

    /// Why `width`×`height` is over the limits ("limit … pixels per side"), or nil when it is within them.
    /// Every format's header check goes through here, so all refuse alike.
    func violation(width: Int, height: Int) -> String? {
        if width > maxSide || height > maxSide { return "limit \(maxSide) pixels per side" }
        if width * height > maxPixels { return "limit \(maxPixels) pixels" }
        return nil
    }
}

extension ImageLimits {
    /// Refuses dimensions over the limits, before anything is allocated for them.
    func check(width: Int, height: Int, kind: ImageKind) throws(CoverImageError) {
        guard width > 0, height > 0 else { throw .decodeFailed(kind, "the header says \(width)×\(height)") }
        if let reason = violation(width: width, height: height) { throw .tooLarge(width: width, height: height, reason: reason) }
    }
}
