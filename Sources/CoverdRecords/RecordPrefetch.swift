import Dispatch
import Synchronization

/// Reads and decodes several record files at once, one per core.
enum RecordPrefetch {
    struct Result: Sendable {
        /// Taken before the read, as for a file read alone: a change during the read shows next time.
        var identity: RecordTree.FileSignature?
        var contents: Swift.Result<RecordContents, RecordFileError>
    }

    /// `identity` is each file's signature, taken before this read.
    static func read(
        _ files: [(path: String, kind: RecordFileKind, identity: RecordTree.FileSignature?)], with reader: RecordFileReader
    ) -> [String: Result] {
        guard files.count > 1 else { return [:] }
        let results = Mutex<[String: Result]>([:])
        DispatchQueue.concurrentPerform(iterations: files.count) { index in
            let (path, kind, identity) = files[index]
            let contents: Swift.Result<RecordContents, RecordFileError>
            do throws(RecordFileError) { contents = .success(try reader.read(path, kind: kind)) } catch { contents = .failure(error) }
            results.withLock { $0[path] = Result(identity: identity, contents: contents) }
        }
        return results.withLock { $0 }
    }
}
