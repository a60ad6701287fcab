import Foundation
import CoverdCache
import CoverdModel

/// The byte form of one `IndexRow` inside `PersistedRows`: lengths and
/// integers as LEB128 varints (signed ones zigzagged), dates as the bits of
/// their `Double`, absent optionals as a cleared flag, and the record path as
/// an index into a table (thousands of rows name the same file). A typical
/// row takes about 100 bytes instead of an `IndexRow`'s 216 plus its strings.
enum PackedRowCoding {
    private enum Flag {
        static let year: UInt64 = 1 << 2
        static let genre: UInt64 = 1 << 3
        static let error: UInt64 = 1 << 4
        static let nextRetry: UInt64 = 1 << 5
        static let bytes: UInt64 = 1 << 6
        static let fileMTime: UInt64 = 1 << 7
        static let httpStatus: UInt64 = 1 << 8
        static let coverURL: UInt64 = 1 << 9
        static let releaseID: UInt64 = 1 << 10
        static let releaseGroupID: UInt64 = 1 << 11
        static let foundReleaseID: UInt64 = 1 << 12
        static let foundReleaseGroupID: UInt64 = 1 << 13
        static let resolvedURL: UInt64 = 1 << 14
        /// The resolved URL is the record's own (the common case), stored once.
        static let resolvedIsCoverURL: UInt64 = 1 << 15
        static let stateMask: UInt64 = 0b11
        /// The source, as its index in `CoverSource.allCases` plus one (0: not known).
        static let sourceShift: UInt64 = 16
        static let sourceMask: UInt64 = 0b111 << 16
        static let etag: UInt64 = 1 << 19
        static let lastModified: UInt64 = 1 << 20
        static let checkedAt: UInt64 = 1 << 21
        /// The refresh mark, as its index in `RefreshMark.allCases` plus one (0: none).
        static let refreshShift: UInt64 = 22
        static let refreshMask: UInt64 = 0b11 << 22
    }

    private static let states: [CoverState] = [.pending, .cached, .failed]

    private static func code(of state: CoverState) -> UInt64 {
        switch state {
        case .pending: 0
        case .cached: 1
        case .failed: 2
        }
    }

    /// Appends `row` to `buffer`; `recordIndex` is the row's record path in the caller's table.
    static func encode(_ row: IndexRow, recordIndex: Int, into buffer: inout [UInt8]) {
        var flags = code(of: row.state)
        if row.year != nil { flags |= Flag.year }
        if row.genre != nil { flags |= Flag.genre }
        if row.error != nil { flags |= Flag.error }
        if row.nextRetry != nil { flags |= Flag.nextRetry }
        if row.bytes != nil { flags |= Flag.bytes }
        if row.fileMTime != nil { flags |= Flag.fileMTime }
        if row.httpStatus != nil { flags |= Flag.httpStatus }
        if row.coverURL != nil { flags |= Flag.coverURL }
        if row.releaseID != nil { flags |= Flag.releaseID }
        if row.releaseGroupID != nil { flags |= Flag.releaseGroupID }
        if row.foundReleaseID != nil { flags |= Flag.foundReleaseID }
        if row.foundReleaseGroupID != nil { flags |= Flag.foundReleaseGroupID }
        let resolvedIsCoverURL = row.resolvedURL != nil && row.resolvedURL == row.coverURL
        if resolvedIsCoverURL { flags |= Flag.resolvedIsCoverURL } else if row.resolvedURL != nil { flags |= Flag.resolvedURL }
        if let source = row.source, let index = CoverSource.allCases.firstIndex(of: source) {
            flags |= UInt64(index + 1) << Flag.sourceShift
        }
        if row.etag != nil { flags |= Flag.etag }
        if row.lastModified != nil { flags |= Flag.lastModified }
        if row.checkedAt != nil { flags |= Flag.checkedAt }
        if let refresh = row.refresh, let index = RefreshMark.allCases.firstIndex(of: refresh) {
            flags |= UInt64(index + 1) << Flag.refreshShift
        }
        putString(row.id.rawValue, into: &buffer)
        putVarint(flags, into: &buffer)
        putString(row.title, into: &buffer)
        putString(row.artist, into: &buffer)
        if let year = row.year { putString(year, into: &buffer) }
        if let genre = row.genre { putString(genre, into: &buffer) }
        if let coverURL = row.coverURL { putString(coverURL, into: &buffer) }
        if let releaseID = row.releaseID { putString(releaseID, into: &buffer) }
        if let releaseGroupID = row.releaseGroupID { putString(releaseGroupID, into: &buffer) }
        if let found = row.foundReleaseID { putString(found, into: &buffer) }
        if let found = row.foundReleaseGroupID { putString(found, into: &buffer) }
        if !resolvedIsCoverURL, let resolved = row.resolvedURL { putString(resolved, into: &buffer) }
        putVarint(UInt64(recordIndex), into: &buffer)
        if let error = row.error { putString(error, into: &buffer) }
        putSigned(Int64(row.attempts), into: &buffer)
        if let nextRetry = row.nextRetry { putDate(nextRetry, into: &buffer) }
        if let bytes = row.bytes { putSigned(Int64(bytes), into: &buffer) }
        if let fileMTime = row.fileMTime { putSigned(fileMTime, into: &buffer) }
        if let httpStatus = row.httpStatus { putSigned(Int64(httpStatus), into: &buffer) }
        putDate(row.updatedAt, into: &buffer)
        if let etag = row.etag { putString(etag, into: &buffer) }
        if let lastModified = row.lastModified { putString(lastModified, into: &buffer) }
        if let checkedAt = row.checkedAt { putDate(checkedAt, into: &buffer) }
    }

    /// The row starting at `offset`; `records` is the table `encode` indexed into.
    static func decode(_ buffer: [UInt8], at offset: Int, records: [String]) -> IndexRow {
        var cursor = offset
        let id = string(buffer, &cursor)
        let flags = varint(buffer, &cursor)
        let title = string(buffer, &cursor)
        let artist = string(buffer, &cursor)
        let year = flags & Flag.year != 0 ? string(buffer, &cursor) : nil
        let genre = flags & Flag.genre != 0 ? string(buffer, &cursor) : nil
        let coverURL = flags & Flag.coverURL != 0 ? string(buffer, &cursor) : nil
        let releaseID = flags & Flag.releaseID != 0 ? string(buffer, &cursor) : nil
        let releaseGroupID = flags & Flag.releaseGroupID != 0 ? string(buffer, &cursor) : nil
        let foundReleaseID = flags & Flag.foundReleaseID != 0 ? string(buffer, &cursor) : nil
        let foundReleaseGroupID = flags & Flag.foundReleaseGroupID != 0 ? string(buffer, &cursor) : nil
        let resolvedURL = flags & Flag.resolvedIsCoverURL != 0 ? coverURL : (flags & Flag.resolvedURL != 0 ? string(buffer, &cursor) : nil)
        let record = records[Int(varint(buffer, &cursor))]
        let error = flags & Flag.error != 0 ? string(buffer, &cursor) : nil
        let attempts = Int(signed(buffer, &cursor))
        let nextRetry = flags & Flag.nextRetry != 0 ? date(buffer, &cursor) : nil
        let bytes = flags & Flag.bytes != 0 ? Int(signed(buffer, &cursor)) : nil
        let fileMTime = flags & Flag.fileMTime != 0 ? signed(buffer, &cursor) : nil
        let httpStatus = flags & Flag.httpStatus != 0 ? Int(signed(buffer, &cursor)) : nil
        var row = IndexRow(
            id: AlbumID(trusted: id), title: title, artist: artist, record: record, state: states[Int(flags & Flag.stateMask)],
            updatedAt: date(buffer, &cursor))
        row.year = year
        row.genre = genre
        row.coverURL = coverURL
        row.releaseID = releaseID
        row.releaseGroupID = releaseGroupID
        row.error = error
        row.attempts = attempts
        row.nextRetry = nextRetry
        row.bytes = bytes
        row.fileMTime = fileMTime
        row.httpStatus = httpStatus
        let source = Int((flags & Flag.sourceMask) >> Flag.sourceShift)
        row.source = source == 0 ? nil : CoverSource.allCases[source - 1]
        row.foundReleaseID = foundReleaseID
        row.foundReleaseGroupID = foundReleaseGroupID
        row.resolvedURL = resolvedURL
        row.etag = flags & Flag.etag != 0 ? string(buffer, &cursor) : nil
        row.lastModified = flags & Flag.lastModified != 0 ? string(buffer, &cursor) : nil
        row.checkedAt = flags & Flag.checkedAt != 0 ? date(buffer, &cursor) : nil
        let refresh = Int((flags & Flag.refreshMask) >> Flag.refreshShift)
        row.refresh = refresh == 0 ? nil : RefreshMark.allCases[refresh - 1]
        return row
    }

    /// The id's bytes of the row at `offset`, without decoding the rest.
    static func idRange(_ buffer: [UInt8], at offset: Int) -> Range<Int> {
        var cursor = offset
        let length = Int(varint(buffer, &cursor))
        return cursor..<(cursor + length)
    }

    // MARK: Primitives

    private static func putVarint(_ value: UInt64, into buffer: inout [UInt8]) {
        var value = value
        while value >= 0x80 {
            buffer.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        buffer.append(UInt8(value))
    }

    private static func putSigned(_ value: Int64, into buffer: inout [UInt8]) {
        putVarint(UInt64(bitPattern: (value << 1) ^ (value >> 63)), into: &buffer)
    }

    private static func putString(_ text: String, into buffer: inout [UInt8]) {
        putVarint(UInt64(text.utf8.count), into: &buffer)
        buffer.append(contentsOf: text.utf8)
    }

    private static func putDate(_ date: Date, into buffer: inout [UInt8]) {
        let bits = date.timeIntervalSinceReferenceDate.bitPattern
        for shift in stride(from: 0, to: 64, by: 8) { buffer.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift))) }
    }

    private static func varint(_ buffer: [UInt8], _ cursor: inout Int) -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let byte = buffer[cursor]
            cursor += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return value }
            shift += 7
        }
    }

    private static func signed(_ buffer: [UInt8], _ cursor: inout Int) -> Int64 {
        let raw = varint(buffer, &cursor)
        return Int64(bitPattern: raw >> 1) ^ -Int64(bitPattern: raw & 1)
    }

    private static func string(_ buffer: [UInt8], _ cursor: inout Int) -> String {
        let length = Int(varint(buffer, &cursor))
        defer { cursor += length }
        return String(decoding: buffer[cursor..<(cursor + length)], as: UTF8.self)
    }

    private static func date(_ buffer: [UInt8], _ cursor: inout Int) -> Date {
        var bits: UInt64 = 0
        for index in 0..<8 { bits |= UInt64(buffer[cursor + index]) << UInt64(index * 8) }
        cursor += 8
        return Date(timeIntervalSinceReferenceDate: Double(bitPattern: bits))
    }
}
