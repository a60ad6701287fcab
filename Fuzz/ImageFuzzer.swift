// libFuzzer target: the whole cover pipeline from any bytes: sniffing, the PNG
// validator, the JPEG, WebP and GIF decoders (and their C error paths), the
// resampler and the PNG encoder. Built by scripts/fuzz.sh with
// `swiftc -sanitize=fuzzer,address`; see `make fuzz`.
import CoverdImages

@_cdecl("LLVMFuzzerTestOneInput")
public func imageFuzzer(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    var limits = ImageLimits()
    limits.maxSide = 4096
    limits.maxPixels = 4_000_000
    // Half the inputs are also scaled down, so the resampler sees what the decoders make.
    let output = ImageOutput(maxDimension: size % 2 == 0 ? 48 : nil, compressionLevel: 1)
    do throws(CoverImageError) {
        let cover = try CoverImagePipeline(limits: limits, output: output).makePNG(from: bytes, sourceURL: "https://fuzz.example/c")
        if cover.png == bytes {
            // Kept byte for byte: only a PNG within every limit may be.
            precondition(cover.sourceKind == .png && (output.maxDimension.map { max(cover.info.width, cover.info.height) <= $0 } ?? true))
        } else {
            // Anything coverd wrote itself must be a whole, valid PNG of the size it claims.
            let info: PNGInfo
            do {
                info = try PNGValidator(limits: limits).validate(cover.png)
            } catch {
                preconditionFailure("coverd wrote an invalid PNG: \(error)")
            }
            precondition(info == cover.info)
            precondition(output.maxDimension.map { max(info.width, info.height) <= $0 } ?? true)
        }
        precondition(cover.info.width <= limits.maxSide && cover.info.height <= limits.maxSide)
        precondition(cover.info.width * cover.info.height <= limits.maxPixels)
    } catch {
        precondition(!error.description.isEmpty)
    }
    return 0
}
