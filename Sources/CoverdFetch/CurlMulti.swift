import CCurl

/// Owns one multi handle; cleans it up in `deinit` after every easy handle was removed.
final class CurlMulti {
    let handle: UnsafeMutableRawPointer

    init(settings: FetchSettings) {
        CurlGlobal.ensureInitialised()
        guard let handle = curl_multi_init() else {
            preconditionFailure("curl_multi_init failed: out of memory")
        }
        self.handle = handle
        apply(settings)
    }

    deinit {
        curl_multi_cleanup(handle)
    }

    /// Connection limits: the admission queue enforces `concurrency` and
    /// `per_host` for covers; these leave room beyond them for the answers a
    /// caller paces (`TransferLoop.answerRoom`): one held pending inside
    /// libcurl behind covers would start whenever a cover ended, undoing its
    /// caller's pacing. (Right after a reload lowers the limits, covers still
    /// running above them can hold an answer back until they end.)
    func apply(_ settings: FetchSettings) {
        coverd_multi_setopt_long(handle, CURLMOPT_MAX_HOST_CONNECTIONS, settings.perHost + TransferLoop.answerRoom)
        coverd_multi_setopt_long(handle, CURLMOPT_MAX_TOTAL_CONNECTIONS, settings.concurrency + TransferLoop.answerRoom)
        coverd_multi_setopt_long(handle, CURLMOPT_MAXCONNECTS, max(settings.concurrency * 2, 8))
    }
}
