import CoverdBase

/// Which files under the records directory are records, and how to read them.
public enum RecordFileKind: Sendable, Equatable {
    case json
    case archive

    /// `nil` for names that are not records: hidden files, editor and download
    /// leftovers (`.tmp`, `.part`, `~`), and other extensions.
    public init?(fileName name: String) {
        if name.hasPrefix(".") || name.hasSuffix(".tmp") || name.hasSuffix(".part") || name.hasSuffix("~") {
            return nil
        }
        if name.hasSuffix(".json") {
            self = .json
        } else if name.hasSuffix(".bin") {
            self = .archive
        } else {
            return nil
        }
    }
}

/// Reads and decodes one record file.
///
/// Only regular files are read, opened non-blocking so that a FIFO can never
/// hang the watcher, and never more than the size limit.
public struct RecordFileReader: Sendable {
    public var limits: RecordLimits

    public init(limits: RecordLimits = RecordLimits()) {
        self.limits = limits
    }

    public func read(_ path: String, kind: RecordFileKind) throws(RecordFileError) -> RecordContents {
        let bytes = try readBytes(path)
        let validator = AlbumValidator(limits: limits)
        switch kind {
        case .json: return try JSONRecordDecoder(validator: validator).decode(bytes, record: path)
        case .archive: return try ArchiveRecordDecoder(validator: validator).decode(bytes, record: path)
        }
    }

    public func readBytes(_ path: String) throws(RecordFileError) -> [UInt8] {
        do {
            return try readRegularFile(path, limit: limits.maxFileBytes)
        } catch {
            switch error {
            case .cannotOpen(let code): throw .cannotOpen(path: path, errno: code)
            case .notRegularFile(let kind): throw .notRegularFile(path: path, kind: kind)
            case .tooLarge(let size, let limit): throw .tooLarge(path: path, size: size, limit: limit)
            case .readFailed(let code): throw .readFailed(path: path, errno: code)
            }
        }
    }
}
