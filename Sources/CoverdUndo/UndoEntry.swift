import CoverdBase
import CoverdModel
import Foundation

/// One `coverd remove` as the undo journal keeps it: the record file's bytes
/// before the removal, and what the removal left there, so that `coverd
/// undo` can tell whether the file is still as the removal left it.
///
/// On disk: one JSON line (what is removed from where, and how many bytes of
/// each version follow), then the bytes before, then the bytes after.
public struct UndoEntry: Sendable, Equatable {
    /// Its place in the journal: later removals have larger numbers.
    public var sequence: UInt64
    public var record: String
    public var album: AlbumID
    /// The record file's permission bits, which a restored file gets back.
    public var mode: UInt32
    public var before: [UInt8]
    /// What the removal left; nil when it deleted the file.
    public var after: [UInt8]?
    public var removedAt: Date

    public init(sequence: UInt64 = 0, record: String, album: AlbumID, mode: UInt32, before: [UInt8], after: [UInt8]?, removedAt: Date) {
        self.sequence = sequence
        self.record = record
        self.album = album
        self.mode = mode
        self.before = before
        self.after = after
        self.removedAt = removedAt
    }

    func encoded() -> [UInt8] {
        let header = "{\"version\": 1, \"record\": \(JSONText.quote(record)), \"album\": \(JSONText.quote(album.rawValue)), "
            + "\"mode\": \(mode), \"removed_at\": \(Int64(removedAt.timeIntervalSince1970)), "
            + "\"before\": \(before.count), \"after\": \(after.map { String($0.count) } ?? "null")}\n"
        return Array(header.utf8) + before + (after ?? [])
    }

    /// Reads an entry written by `encoded()`; `sequence` comes from its file's name.
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
        func text(_ key: String) throws(UndoJournalError.Damage) -> String {
            guard case .string(let value)? = members[key]?.value else { throw .init("'\(key)' is not a string") }
            return value
        }
        func integer(_ key: String) throws(UndoJournalError.Damage) -> Int? {
            switch members[key]?.value {
            case .null?: return nil
            case .number(let number)?:
                guard let value = Int(number), value >= 0 else { throw .init("'\(key)' is not a whole number") }
                return value
            default: throw .init("'\(key)' is missing")
            }
        }
        guard case .number("1")? = members["version"]?.value else {
            throw .init("written by another version of coverd")
        }
        guard let album = try? AlbumID(validating: try text("album")) else { throw .init("'album' is not an album id") }
        guard let beforeCount = try integer("before") else { throw .init("'before' is null") }
        let afterCount = try integer("after")
        let body = bytes[(newline + 1)...]
        guard body.count == beforeCount + (afterCount ?? 0) else {
            throw .init("\(body.count) bytes follow the header, which counts \(beforeCount + (afterCount ?? 0))")
        }
        let split = body.startIndex + beforeCount
        return UndoEntry(
            sequence: sequence, record: try text("record"), album: album, mode: UInt32(try integer("mode") ?? 0o644),
            before: Array(body[..<split]), after: afterCount.map { _ in Array(body[split...]) },
            removedAt: Date(timeIntervalSince1970: TimeInterval(try integer("removed_at") ?? 0)))
    }
}
