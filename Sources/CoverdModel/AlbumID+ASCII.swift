/// `AlbumID.derived` for ASCII artists and titles, on their bytes.
///
/// The general way (a Unicode normalisation, a case mapping and a split per
/// field) was much of a restart's CPU over a large library without ids
/// (bench/HISTORY.md). ASCII is its own canonical form and its case mapping is
/// one addition, so the same id comes from the bytes alone: a check that
/// they are ASCII, then the hash and the readable part, without a string
/// made on the way.
extension AlbumID {
    /// The id `derivedScalarByScalar` gives, or nil when a field is not ASCII
    /// and the general way must decide. (Also nil for a string not stored
    /// contiguously, a bridged one; on Linux every string is contiguous.)
    static func derivedFromASCII(artist: String, title: String) -> AlbumID? {
        let id = artist.utf8.withContiguousStorageIfAvailable { artist in
            title.utf8.withContiguousStorageIfAvailable { title in fromASCII(artist, title) } ?? nil
        }
        return id ?? nil
    }

    private static func fromASCII(_ artist: UnsafeBufferPointer<UInt8>, _ title: UnsafeBufferPointer<UInt8>) -> AlbumID? {
        guard artist.allSatisfy({ $0 < 0x80 }), title.allSatisfy({ $0 < 0x80 }) else { return nil }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func mix(_ byte: UInt8) {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        // The key is both fields lower-cased, white space runs made one space and trimmed, joined by U+001F.
        func mixNormalised(_ field: UnsafeBufferPointer<UInt8>) {
            var started = false, pendingSpace = false
            for byte in field {
                if isWhitespace(byte) {
                    pendingSpace = started
                    continue
                }
                if pendingSpace { mix(0x20) }
                pendingSpace = false
                started = true
                mix(lowercase(byte))
            }
        }
        mixNormalised(artist)
        mix(0x1F)
        mixNormalised(title)

        var slug: [UInt8] = []
        slug.reserveCapacity(min(artist.count + title.count + 1, 96))
        appendSlug(artist, to: &slug)
        slug.append(UInt8(ascii: "-"))
        appendSlug(title, to: &slug)
        var kept = trimmingDashes(slug[...])
        kept = trimmingDashes(kept.prefix(80))

        var id = Array(kept)
        if !id.isEmpty { id.append(UInt8(ascii: "-")) }
        for shift in stride(from: 60, through: 16, by: -4) {  // the top 48 bits: 12 of the 16 hex digits
            let digit = UInt8(truncatingIfNeeded: hash >> UInt64(shift)) & 0xF
            id.append(digit < 10 ? 0x30 + digit : 0x57 + digit)  // 0-9, a-f
        }
        return AlbumID(trusted: String(decoding: id, as: UTF8.self))
    }

    /// Letters and digits lower-cased; any run of other bytes one dash, never first.
    private static func appendSlug(_ field: UnsafeBufferPointer<UInt8>, to slug: inout [UInt8]) {
        let start = slug.count
        var pendingDash = false
        for byte in field {
            let lower = lowercase(byte)
            guard isAlphanumeric(lower) else {
                pendingDash = true
                continue
            }
            if pendingDash && slug.count > start { slug.append(UInt8(ascii: "-")) }
            pendingDash = false
            slug.append(lower)
        }
    }

    private static func trimmingDashes(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var bytes = bytes
        while bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
        while bytes.last == UInt8(ascii: "-") { bytes = bytes.dropLast() }
        return bytes
    }

    /// Unicode's White_Space in ASCII: tab, line feed, vertical tab, form feed, carriage return, space.
    private static func isWhitespace(_ byte: UInt8) -> Bool { (byte >= 0x09 && byte <= 0x0D) || byte == 0x20 }

    private static func lowercase(_ byte: UInt8) -> UInt8 { byte >= 0x41 && byte <= 0x5A ? byte + 0x20 : byte }
}
