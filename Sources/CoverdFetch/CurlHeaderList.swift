import CCurl

/// Owns a `curl_slist` of request headers for one transfer; frees it in
/// `deinit`, after libcurl is done with the transfer (the transfer holds it).
final class CurlHeaderList {
    private(set) var list: UnsafeMutablePointer<curl_slist>?

    /// Nil when libcurl could not allocate a line.
    init?(_ lines: [String]) {
        for line in lines {
            guard let longer = curl_slist_append(list, line) else {
                // deinit runs for a failed init too: it frees what was built.
                return nil
            }
            list = longer
        }
    }

    deinit {
        curl_slist_free_all(list)
    }
}
