import CCurl

/// Owns one easy handle; cleans it up in `deinit`. Used only on the transfer thread.
final class CurlEasy {
    let handle: UnsafeMutableRawPointer

    init() {
        CurlGlobal.ensureInitialised()
        guard let handle = curl_easy_init() else {
            preconditionFailure("curl_easy_init failed: out of memory")
        }
        self.handle = handle
    }

    deinit {
        curl_easy_cleanup(handle)
    }

    /// Back to defaults for reuse; keeps the handle's DNS and TLS session caches.
    func reset() {
        curl_easy_reset(handle)
    }

    func set(_ option: CURLoption, _ value: Int, _ name: String) throws(CurlSetupError) {
        try check(coverd_easy_setopt_long(handle, option, value), name)
    }

    func set(_ option: CURLoption, offset value: Int64, _ name: String) throws(CurlSetupError) {
        try check(coverd_easy_setopt_off(handle, option, curl_off_t(value)), name)
    }

    /// libcurl copies string options, so `value` need not outlive the call.
    func set(_ option: CURLoption, _ value: String, _ name: String) throws(CurlSetupError) {
        try check(coverd_easy_setopt_string(handle, option, value), name)
    }

    func set(_ option: CURLoption, pointer value: UnsafeMutableRawPointer?, _ name: String) throws(CurlSetupError) {
        try check(coverd_easy_setopt_pointer(handle, option, value), name)
    }

    func set(_ option: CURLoption, callback: curl_write_callback, _ name: String) throws(CurlSetupError) {
        try check(coverd_easy_setopt_write_function(handle, option, callback), name)
    }

    func info(long key: CURLINFO) -> Int {
        var value = 0
        return coverd_easy_getinfo_long(handle, key, &value) == CURLE_OK ? value : 0
    }

    /// A time `key` reports in microseconds (the `_T` infos); nil when libcurl has none.
    func info(microseconds key: CURLINFO) -> Duration? {
        var value: curl_off_t = 0
        guard coverd_easy_getinfo_off(handle, key, &value) == CURLE_OK, value > 0 else { return nil }
        return .microseconds(value)
    }

    func info(string key: CURLINFO) -> String? {
        var value: UnsafeMutablePointer<CChar>?
        guard coverd_easy_getinfo_string(handle, key, &value) == CURLE_OK, let value else { return nil }
        return String(cString: value)
    }

    func info(pointer key: CURLINFO) -> UnsafeMutableRawPointer? {
        var value: UnsafeMutableRawPointer?
        return coverd_easy_getinfo_pointer(handle, key, &value) == CURLE_OK ? value : nil
    }

    private func check(_ code: CURLcode, _ name: String) throws(CurlSetupError) {
        guard code == CURLE_OK else { throw CurlSetupError(option: name, code: code) }
    }
}
