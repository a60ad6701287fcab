import CCurl
import CoverdBase
import CoverdModel

/// The options every transfer gets: protocols, redirects, TLS verification
/// (with `ca_file`'s authorities added), timeouts, the size cap, callbacks.
struct TransferOptions {
    let settings: FetchSettings
    let userAgent: String
    let authorities: TrustedAuthorities
    /// Holds the in-memory file `authorities` names open while these options are in use.
    private let bundleFiles: CABundleFiles
    /// Things worth a warning that did not prevent the setup.
    var notes: [String] { authorities.notes }

    /// `userAgent`: nil sends `coverd/<version> ( <contact> )`. `bundleFiles`: the fetcher's, kept across reloads.
    /// `systemBundle`: libcurl's CA bundle file (tests name a missing one).
    init(
        settings: FetchSettings, userAgent: String?, bundleFiles: CABundleFiles, systemBundle: String? = CurlGlobal.defaultCABundle
    ) throws(SystemError) {
        self.settings = settings
        self.userAgent = userAgent ?? CoverdVersion.userAgent(contact: settings.contact)
        self.bundleFiles = bundleFiles
        authorities = try TrustedAuthorities(caFile: settings.caFile, files: bundleFiles, systemBundle: systemBundle)
    }

    func configure(_ transfer: Transfer) throws(CurlSetupError) {
        let easy = transfer.easy
        try easy.set(CURLOPT_URL, transfer.url.string, "URL")
        try easy.set(CURLOPT_PROTOCOLS_STR, "http,https", "PROTOCOLS_STR")
        try easy.set(CURLOPT_REDIR_PROTOCOLS_STR, "http,https", "REDIR_PROTOCOLS_STR")
        try easy.set(CURLOPT_FOLLOWLOCATION, 1, "FOLLOWLOCATION")
        try easy.set(CURLOPT_MAXREDIRS, settings.maxRedirects, "MAXREDIRS")
        try easy.set(CURLOPT_NOSIGNAL, 1, "NOSIGNAL")
        try easy.set(CURLOPT_SSL_VERIFYPEER, 1, "SSL_VERIFYPEER")
        try easy.set(CURLOPT_SSL_VERIFYHOST, 2, "SSL_VERIFYHOST")
        try easy.set(CURLOPT_CONNECTTIMEOUT_MS, Int(settings.connectTimeout.milliseconds), "CONNECTTIMEOUT_MS")
        try easy.set(CURLOPT_TIMEOUT_MS, Int(settings.totalTimeout.milliseconds), "TIMEOUT_MS")
        if settings.lowSpeedLimit > 0 {
            try easy.set(CURLOPT_LOW_SPEED_LIMIT, settings.lowSpeedLimit, "LOW_SPEED_LIMIT")
            try easy.set(CURLOPT_LOW_SPEED_TIME, max(1, Int(settings.lowSpeedTime.seconds.rounded())), "LOW_SPEED_TIME")
        }
        try easy.set(CURLOPT_MAXFILESIZE_LARGE, offset: Int64(transfer.maxBytes), "MAXFILESIZE_LARGE")
        try easy.set(CURLOPT_USERAGENT, userAgent, "USERAGENT")
        if Self.isHTTPS(transfer.url) {
            // PIPEWAIT for https only: the TLS handshake (ALPN) tells libcurl whether the host
            // multiplexes, so an HTTP/2 host gets one connection and a stalled handshake holds the
            // host's other covers at most connect_timeout each; over http:// libcurl 7.88 learns it
            // only from the first answer, and a silent one held up the host (TLSConnectionTests,
            // silentServerDoesNotHoldUpItsHost).
            try easy.set(CURLOPT_PIPEWAIT, 1, "PIPEWAIT")
        }
        try easy.set(CURLOPT_TCP_KEEPALIVE, 1, "TCP_KEEPALIVE")
        try easy.set(CURLOPT_ERRORBUFFER, pointer: UnsafeMutableRawPointer(transfer.errorBuffer), "ERRORBUFFER")
        try easy.set(CURLOPT_WRITEFUNCTION, callback: transferWriteCallback, "WRITEFUNCTION")
        try easy.set(CURLOPT_WRITEDATA, pointer: transfer.unmanagedPointer, "WRITEDATA")
        try easy.set(CURLOPT_HEADERFUNCTION, callback: transferHeaderCallback, "HEADERFUNCTION")
        try easy.set(CURLOPT_HEADERDATA, pointer: transfer.unmanagedPointer, "HEADERDATA")
        try easy.set(CURLOPT_PRIVATE, pointer: transfer.unmanagedPointer, "PRIVATE")
        if let validators = transfer.revalidating, !validators.isEmpty {
            var lines: [String] = []
            if let etag = validators.etag { lines.append("If-None-Match: \(etag)") }
            if let lastModified = validators.lastModified { lines.append("If-Modified-Since: \(lastModified)") }
            guard let headers = CurlHeaderList(lines) else { throw CurlSetupError(option: "HTTPHEADER", code: CURLE_OUT_OF_MEMORY) }
            transfer.headers = headers
            try easy.set(CURLOPT_HTTPHEADER, pointer: UnsafeMutableRawPointer(headers.list), "HTTPHEADER")
        }
        if let file = authorities.file {
            // A CAPATH (Debian's libcurl has /etc/ssl/certs) would keep libcurl from sharing one parsed store.
            try easy.set(CURLOPT_CAINFO, file, "CAINFO")
            try easy.set(CURLOPT_CAPATH, pointer: nil, "CAPATH")
        } else if authorities.directoryOnly {
            try easy.set(CURLOPT_CAINFO, pointer: nil, "CAINFO")
        }
    }

    /// Whether `url`'s scheme is https, in any case.
    private static func isHTTPS(_ url: CoverURL) -> Bool {
        url.string.utf8.prefix(6).map { $0 | 0x20 }.elementsEqual("https:".utf8)
    }
}
