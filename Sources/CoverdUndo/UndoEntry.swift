import CoverdBase
import CoverdModel
import Foundation

/// One `coverd remove` as the undo journal keeps it: the record file's bytes
/// before the removal, and a fingerprint of what the removal left there, so
/// that `coverd undo` can tell whether the file is still as the removal left it.
///
/// On disk: one JSON line (what was removed from where, how many bytes follow,
/// and the fingerprint), then the bytes before.
public struct UndoEntry: Sendable, Equatable {
    /// What a removal left in the record file: its length and SHA-256.
    public struct Fingerprint: Sendable, Equatable {
        public var length: Int
        public var sha256: String

        public init(of bytes: [UInt8]) {
            length = bytes.count
            sha256 = SHA256.hex(bytes)
        }

        init(length: Int, sha256: String) {
            self.length = length
            self.sha256 = sha256
        }

        /// True when `bytes` are what was fingerprinted; the length is compared first, so most changes cost no digest.
        public func matches(_ bytes: [UInt8]) -> Bool {
            bytes.count == length && SHA256.hex(bytes) == sha256
        }
    }

    /// Its place in the journal: later removals have larger numbers.
    public var sequence: UInt64
    public var record: String
    public var album: AlbumID
    /// The record file's permission bits, which a restored file gets back.
    public var mode: UInt32
    public var before: [UInt8]
    /// What the removal left; nil when it deleted the file.
    public var after: Fingerprint?
    public var removedAt: Date

    public init(sequence: UInt64 = 0, record: String, album: AlbumID, mode: UInt32, before: [UInt8], after: Fingerprint?, removedAt: Date) {
        self.sequence = sequence
        self.record = record
        self.album = album
        self.mode = mode
        self.before = before
        self.after = after
        self.removedAt = removedAt
    }

    func encoded() -> [UInt8] {
        let after = after.map { "{\"length\": \($0.length), \"sha256\": \"\($0.sha256)\"}" } ?? "null"
        let header = "{\"version\": 2, \"record\": \(JSONText.quote(record)), \"album\": \(JSONText.quote(album.rawValue)), "
            + "\"mode\": \(mode), \"removed_at\": \(Int64(removedAt.timeIntervalSince1970)), "
            + "\"before\": \(before.count), \"after\": \(after)}\n"
        return Array(header.utf8) + before
    }

    /// Reads an entry written by `encoded()` (or by the first version, which kept the bytes after whole);
    /// `sequence` comes from its file's name.
    static func decode(_ bytes: [UInt8], sequence: UInt64) throws(UndoJournalError.Damage) -> UndoEntry {
        guard let newline = bytes.firstIndex(of: 0x0A) else { throw .init("no header line") }
        let members: [String: JSONNode]
        do {
            guard case .object(let object) = try JSONParser(maxDepth: 4).parse(Array(bytes[..<newline])).value else {
                throw UndoJournalError.Damage("the header is not an object")
            }
            members = object
        } catch let damage as UndoJournalError.Damage {
            throw damage
        } catch {
            throw .init("the header is not JSON (\(error))")
        }
        let header = Header(members: members)
        let version = try header.integer("version")
        guard version == 1 || version == 2 else { throw .init("written by another version of coverd") }
        guard let album = try? AlbumID(validating: try header.text("album")) else { throw .init("'album' is not an album id") }
        guard let beforeCount = try header.integer("before") else { throw .init("'before' is null") }
        guard let mode = try header.integer("mode"), let mode = UInt32(exactly: mode), mode <= 0o7777 else {
            throw .init("'mode' is not a file mode")
        }
        let removedAt = Date(timeIntervalSince1970: TimeInterval(try header.integer("removed_at") ?? 0))
        let body = bytes[(newline + 1)...]
        let after: Fingerprint?
        var expected = beforeCount
        if version == 1 {
            let afterCount = try header.integer("after")
            let (sum, overflow) = beforeCount.addingReportingOverflow(afterCount ?? 0)
            guard !overflow else { throw .init("its byte counts overflow") }
            expected = sum
            after = afterCount.map { _ in Fingerprint(of: Array(body.dropFirst(beforeCount))) }
        } else {
            after = try header.fingerprint("after")
        }
        guard body.count == expected else {
            throw .init("\(body.count) bytes follow the header, which counts \(expected)")
        }
        return UndoEntry(
            sequence: sequence, record: try header.text("record"), album: album, mode: mode,
            before: Array(body.prefix(beforeCount)), after: after, removedAt: removedAt)
    }

    /// The header line's members, read with the reason a bad one gives.
    private struct Header {
        let members: [String: JSONNode]

        func text(_ key: String) throws(UndoJournalError.Damage) -> String {
            guard case .string(let value)? = members[key]?.value else { throw .init("'\(key)' is not a string") }
            return value
        }

        func integer(_ key: String) throws(UndoJournalError.Damage) -> Int? {
            try Self.integer(members[key]?.value, key)
        }

        func fingerprint(_ key: String) throws(UndoJournalError.Damage) -> Fingerprint? {
            switch members[key]?.value {
            case .null?: return nil
            case .object(let object)?:
                guard let length = try Self.integer(object["length"]?.value, "\(key).length"),
                    case .string(let digest)? = object["sha256"]?.value, digest.utf8.count == 64,
                    digest.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) })
                else { throw .init("'\(key)' is not a fingerprint") }
                return Fingerprint(length: length, sha256: digest)
            default: throw .init("'\(key)' is missing")
            }
        }

        private static func integer(_ value: JSONValue?, _ key: String) throws(UndoJournalError.Damage) -> Int? {
            switch value {
            case .null?: return nil
            case .number(let number)?:
                guard let value = Int(number), value >= 0 else { throw .init("'\(key)' is not a whole number") }
                return value
            default: throw .init("'\(key)' is missing")
            }
        }
    }
}
