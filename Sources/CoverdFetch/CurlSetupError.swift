import CCurl

/// A libcurl setup call that failed; only a programming error or an option
/// this libcurl lacks can cause it.
struct CurlSetupError: Error, CustomStringConvertible {
    var option: String
    var code: CURLcode
    var description: String { "curl option \(option): \(String(cString: curl_easy_strerror(code)))" }
}
