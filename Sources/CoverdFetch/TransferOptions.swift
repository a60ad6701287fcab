import CCurl
import CoverdBase
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The options every transfer gets: protocols, redirects, TLS verification
/// (with `ca_file`'s authorities added), timeouts, the size cap, callbacks.
struct TransferOptions {
    let settings: FetchSettings
    let userAgent: String
    /// The system CA bundle followed by `ca_file`, so a private CA is trusted
    /// in addition to the public ones; `nil` uses libcurl's defaults.
    let caBundle: [UInt8]?
    /// Things worth a warning that did not prevent the setup.
    private(set) var notes: [String] = []

    /// `userAgent`: nil sends `coverd/<version> ( <contact> )`.
    init(settings: FetchSettings, userAgent: String?) throws(SystemError) {
        self.settings = settings
        self.userAgent = userAgent ?? CoverdVersion.userAgent(contact: settings.contact)
        guard let caFile = settings.caFile else {
            caBundle = nil
            return
        }
        var bundle: [UInt8] = []
        if let system = CurlGlobal.defaultCABundle {
            do {
                bundle = try readRegularFile(system, limit: 16 << 20) + [0x0A]
            } catch {
                // Stricter, never looser: only ca_file is trusted then.
                notes.append("cannot read the system CA bundle \(system) (\(error)); trusting only \(caFile)")
            }
        }
        do {
            bundle += try readRegularFile(caFile, limit: 16 << 20)
        } catch {
            switch error {
            case .cannotOpen(let code), .readFailed(let code): throw SystemError("read ca_file", path: caFile, code: code)
            case .notRegularFile, .tooLarge: throw SystemError("read ca_file", path: caFile, code: EINVAL)
            }
        }
        caBundle = bundle
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
        // No CURLOPT_PIPEWAIT (which curl -Z sets): on http:// libcurl 7.88 then parks new
        // transfers to a host until one there finishes, not knowing yet whether the host
        // multiplexes, so one slow answer held up the host's other covers
        // (silentServerDoesNotHoldUpItsHost). The cost: an HTTP/2 host gets up to perHost
        // connections instead of one (MAX_HOST_CONNECTIONS caps them), and admission limits
        // its streams to perHost either way.
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
        if let caBundle {
            // CURL_BLOB_COPY: libcurl keeps its own copy, so no pointer outlives these closures.
            let code = caBundle.withUnsafeBytes { raw in
                var blob = curl_blob(data: UnsafeMutableRawPointer(mutating: raw.baseAddress), len: raw.count, flags: UInt32(CURL_BLOB_COPY))
                return withUnsafeMutablePointer(to: &blob) { pointer in
                    coverd_easy_setopt_pointer(easy.handle, CURLOPT_CAINFO_BLOB, UnsafeMutableRawPointer(pointer))
                }
            }
            guard code == CURLE_OK else { throw CurlSetupError(option: "CAINFO_BLOB", code: code) }
        }
    }
}
