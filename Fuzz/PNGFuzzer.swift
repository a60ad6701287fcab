// libFuzzer target: the PNG validator and the cover pipeline's sniffing, from any bytes.
// Built by scripts/fuzz.sh with `swiftc -sanitize=fuzzer,address`; see `make fuzz`.

@_cdecl("LLVMFuzzerTestOneInput")
public func pngFuzzer(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    var limits = ImageLimits()
    limits.maxSide = 4096
    limits.maxPixels = 4_000_000
    do throws(CoverImageError) {
        let cover = try CoverImagePipeline(limits: limits).prepare(bytes)
        // Only a PNG within the limits, kept byte for byte, may pass.
        precondition(cover.png == bytes && cover.sourceKind == .png)
        precondition(cover.info.width <= limits.maxSide && cover.info.height <= limits.maxSide)
        precondition(cover.info.width * cover.info.height <= limits.maxPixels)
    } catch {
        precondition(!error.description.isEmpty)
    }
    return 0
}
