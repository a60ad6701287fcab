import CoverdBase
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The certificate authorities every TLS connection trusts, named by one file
/// (CURLOPT_CAINFO, with no CAPATH), because only then does libcurl (7.87 and
/// later) parse them once per multi handle and share the store between
/// connections, for CURLOPT_CA_CACHE_TIMEOUT (24 hours); with a CAINFO_BLOB or
/// a CAPATH each connection parses a copy of its own. The one exception is a
/// system without libcurl's bundle file: then its CA directory is trusted alone.
struct TrustedAuthorities: Sendable {
    /// CURLOPT_CAINFO; nil leaves libcurl's defaults (a libcurl with no CA bundle of its own).
    let file: String?
    /// libcurl's own bundle is missing: CURLOPT_CAINFO is cleared, so its CA
    /// directory (CAPATH) alone is used; left set, every handshake would fail
    /// on the missing file.
    private(set) var directoryOnly = false
    /// Things worth a warning that did not prevent the setup.
    private(set) var notes: [String] = []

    /// The system bundle followed by `caFile`, so a private CA is trusted in
    /// addition to the public ones, in a file of `files`; without `caFile`,
    /// the system bundle alone. `systemBundle`: libcurl's compiled-in one
    /// (tests name others). A system bundle that cannot be read is not named:
    /// libcurl's CA directory, `systemDirectory`, is trusted alone (`directoryOnly`).
    init(
        caFile: String?, files: CABundleFiles, systemBundle: String? = CurlGlobal.defaultCABundle,
        systemDirectory: String? = CurlGlobal.defaultCADirectory
    ) throws(SystemError) {
        guard let caFile else {
            if let systemBundle, access(systemBundle, R_OK) != 0 {
                let code = errno
                file = nil
                directoryOnly = true
                let trusted = systemDirectory.map { "trusting libcurl's CA directory \($0) alone" }
                    ?? "libcurl has no CA directory either: https fails until ca_file names the authorities"
                notes.append("cannot read the system CA bundle \(systemBundle) (errno \(code)); \(trusted)")
            } else {
                file = systemBundle
            }
            return
        }
        var bundle: [UInt8] = []
        if let systemBundle {
            do {
                bundle = try readRegularFile(systemBundle, limit: 16 << 20) + [0x0A]
            } catch {
                // Stricter, never looser: only ca_file is trusted then.
                notes.append("cannot read the system CA bundle \(systemBundle) (\(error)); trusting only \(caFile)")
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
        file = try files.file(holding: bundle).path
    }
}
