import CoverdBase
import Synchronization

/// The sealed in-memory files holding the CA bundles a fetcher has trusted,
/// one per distinct bundle, kept while the fetcher lives: a reload that leaves
/// `ca_file` as it was names the same file (libcurl's parsed store, keyed by
/// the name, stays valid), and a transfer set up before a reload that changed
/// it may still open the old one, for a redirect's new connection say.
final class CABundleFiles: Sendable {
    private let files = Mutex<[[UInt8]: SealedMemoryFile]>([:])

    /// The file holding `bundle`, made the first time it is asked for.
    func file(holding bundle: [UInt8]) throws(SystemError) -> SealedMemoryFile {
        let digest = SHA256.digest(bundle)
        return try files.withLock { files throws(SystemError) in
            if let file = files[digest] { return file }
            let file = try SealedMemoryFile(name: "coverd-ca-bundle", contents: bundle)
            files[digest] = file
            return file
        }
    }
}
