import CoverdBase
import CoverdModel

/// What taking one album out of its JSON record file comes to (contract §9,
/// `coverd remove`): a file that held only that album goes; a list loses that
/// entry and keeps every other byte, in the same form (an array stays an array).
public enum RecordRemoval: Sendable, Equatable {
    case deleteFile
    case rewrite([UInt8])

    /// Plans taking every entry of album `id` out of the record `bytes` read from `record`.
    public static func plan(
        removing id: AlbumID, from bytes: [UInt8], record: String, decoder: JSONRecordDecoder = JSONRecordDecoder()
    ) throws(RecordRemovalError) -> RecordRemoval {
        let name = splitPath(record).name
        guard RecordFileKind(fileName: name) != .archive else { throw .archive(path: record) }
        let contents: RecordContents
        do {
            contents = try decoder.decode(bytes, record: record)
        } catch {
            throw .unreadable(error)
        }
        let positions = contents.albums.filter { $0.id == id }.map(\.recordPosition)
        guard !positions.isEmpty else { throw .notInFile(id: id, path: record) }
        if positions.contains(where: \.isSingle) { return .deleteFile }
        guard let entries = JSONRecordSpans.entries(in: bytes) else { throw .unfollowable(path: record) }
        let doomed = Set(positions.compactMap(\.listEntry).map { $0 - 1 })
        guard doomed.allSatisfy({ $0 < entries.count }) else { throw .unfollowable(path: record) }
        if doomed.count == entries.count { return .deleteFile }
        let rewritten = cut(doomed, from: bytes, entries: entries)
        try check(rewritten, holds: contents.albums.map(\.id).filter { $0 != id }, record: record, decoder: decoder)
        return .rewrite(rewritten)
    }

    /// The byte walk and the decoder must agree: the new file holds exactly
    /// the other albums, in their order, or it is not written at all.
    static func check(_ rewritten: [UInt8], holds expected: [AlbumID], record: String, decoder: JSONRecordDecoder) throws(RecordRemovalError) {
        guard let left = try? decoder.decode(rewritten, record: record), left.albums.map(\.id) == expected else {
            throw .unfollowable(path: record)
        }
    }

    /// `bytes` without the `doomed` entries: what precedes the list and
    /// follows it stays, and two kept entries are joined by the separator the
    /// first had after it, so the others keep their layout to the byte.
    static func cut(_ doomed: Set<Int>, from bytes: [UInt8], entries: [Range<Int>]) -> [UInt8] {
        let kept = entries.indices.filter { !doomed.contains($0) }
        var result = Array(bytes[..<entries[0].lowerBound])
        for (order, position) in kept.enumerated() {
            result += bytes[entries[position]]
            if order + 1 < kept.count {
                result += bytes[entries[position].upperBound..<entries[position + 1].lowerBound]
            }
        }
        result += bytes[entries[entries.count - 1].upperBound...]
        return result
    }
}
