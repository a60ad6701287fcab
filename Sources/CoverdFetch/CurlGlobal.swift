import CCurl

/// Process-wide libcurl initialisation, done once before any handle exists.
enum CurlGlobal {
    private static let initialised: CURLcode = curl_global_init(Int(CURL_GLOBAL_ALL))

    static func ensureInitialised() {
        precondition(initialised == CURLE_OK, "curl_global_init failed: \(String(cString: curl_easy_strerror(initialised)))")
    }

    /// libcurl's compiled-in CA bundle path, if it has one.
    static var defaultCABundle: String? {
        ensureInitialised()
        guard let info = coverd_curl_version_info(), let path = info.pointee.cainfo else { return nil }
        return String(cString: path)
    }

    /// libcurl's compiled-in CA directory, if it has one.
    static var defaultCADirectory: String? {
        ensureInitialised()
        guard let info = coverd_curl_version_info(), let path = info.pointee.capath else { return nil }
        return String(cString: path)
    }

    static var version: String { String(cString: curl_version()) }
}
