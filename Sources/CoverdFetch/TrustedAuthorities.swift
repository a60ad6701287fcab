import CoverdBase
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The certificate authorities every TLS connection trusts, named by one file
/// (CURLOPT_CAINFO, with no CAPATH), because only then does libcurl (7.87 and
/// later) parse them once per multi handle and share the store between
/// connections, for CURLOPT_CA_CACHE_TIMEOUT (24 hours); with a CAINFO_BLOB or
/// a CAPATH each connection parses a copy of its own.
struct TrustedAuthorities: Sendable {
    /// CURLOPT_CAINFO; nil leaves libcurl's defaults (a libcurl with no CA bundle of its own).
    let file: String?
    /// Things worth a warning that did not prevent the setup.
    private(set) var notes: [String] = []

    /// The system bundle followed by `caFile`, so a private CA is trusted in
    /// addition to the public ones; without `caFile`, the system bundle alone.
    init(caFile: String?) throws(SystemError) {
        let system = CurlGlobal.defaultCABundle
        guard let caFile else {
            file = system
            return
        }
        var bundle: [UInt8] = []
        if let system {
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
        file = try Self.memoryFile(holding: bundle).path
    }

    /// One sealed file per distinct bundle, kept while the process lives: a
    /// reload that leaves ca_file as it was names the same file (libcurl's store
    /// stays valid), and a transfer set up before a reload that changed it may
    /// still open the old one, for a redirect's new connection say.
    private static let files = Mutex<[[UInt8]: SealedMemoryFile]>([:])

    private static func memoryFile(holding bundle: [UInt8]) throws(SystemError) -> SealedMemoryFile {
        let digest = SHA256.digest(bundle)
        return try files.withLock { files throws(SystemError) in
            if let file = files[digest] { return file }
            let file = try SealedMemoryFile(name: "coverd-ca-bundle", contents: bundle)
            files[digest] = file
            return file
        }
    }
}
