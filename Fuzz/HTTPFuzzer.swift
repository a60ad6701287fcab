// libFuzzer target: what a hostile server or record controls as text —
// Retry-After values (seconds and the three HTTP-date forms) and cover URLs.
// Built by scripts/fuzz.sh with `swiftc -sanitize=fuzzer,address`; see `make fuzz`.
import CoverdFetch
import CoverdModel
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func httpFuzzer(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let now = Date(timeIntervalSince1970: 1_800_000_000)
    if let delay = RetryAfter.delay(from: text, now: now) {
        precondition(delay >= .zero, "a negative Retry-After delay from \(text.debugDescription)")
    }
    do throws(AlbumFieldError) {
        let url = try CoverURL(validating: text)
        // Only absolute http(s) URLs of printable ASCII with a host get through.
        precondition(url.origin.hasPrefix("http://") || url.origin.hasPrefix("https://"), "origin \(url.origin)")
        precondition(url.origin.count > "https://".count || url.origin.hasPrefix("http://") && url.origin.count > "http://".count)
        precondition(url.string.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }, "unprintable URL \(text.debugDescription)")
    } catch {
        precondition(!error.description.isEmpty)
    }
    return 0
}
