import Foundation

/// An album's identity, which also names its cover file (`<id>.png`).
///
/// Either given by the record (`[A-Za-z0-9][A-Za-z0-9._-]{0,127}`, which can
/// never be a path such as `..` or `/abs`) or derived from artist and title,
/// so that it survives restarts and renames of the record file.
public struct AlbumID: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let rawValue: String

    public init(validating text: String) throws(AlbumFieldError) {
        guard AlbumID.isValid(text) else {
            throw .invalidID(String(text.prefix(64)))
        }
        self.rawValue = text
    }

    /// For values read back from coverd's own index, which only ever stores valid ids.
    package init(trusted rawValue: String) {
        self.rawValue = rawValue
    }

    public static func isValid(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard (1...128).contains(bytes.count), isAlphanumeric(bytes[0]) else { return false }
        return bytes.allSatisfy { isAlphanumeric($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") }
    }

    /// `<artist>-<title>-<hash>`: readable, and unique through a 64-bit FNV-1a
    /// hash of the normalised artist and title (case and spacing folded,
    /// canonical Unicode form) of which 12 hex digits are kept.
    ///
    /// Covers are named by these ids, so the result must never change: ASCII
    /// text (most records) takes a shortcut on its bytes (`derivedFromASCII`),
    /// held to the general way by a test over generated texts.
    public static func derived(artist: String, title: String) -> AlbumID {
        derivedFromASCII(artist: artist, title: title) ?? derivedScalarByScalar(artist: artist, title: title)
    }

    /// The general way: Unicode normalisation and case mapping of whole strings.
    static func derivedScalarByScalar(artist: String, title: String) -> AlbumID {
        let key = normalise(artist) + "\u{1F}" + normalise(title)
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in key.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        let hex = String(hash, radix: 16)
        let digest = String(repeating: "0", count: 16 - hex.count) + hex
        let slug = String((slug(artist) + "-" + slug(title)).trimmingDashes.prefix(80)).trimmingDashes
        let suffix = String(digest.prefix(12))
        return AlbumID(trusted: slug.isEmpty ? suffix : slug + "-" + suffix)
    }

    public var description: String { rawValue }

    public static func < (lhs: AlbumID, rhs: AlbumID) -> Bool { lhs.rawValue < rhs.rawValue }

    /// ASCII letters and digits: what an id may start with, and what the readable part of a derived one keeps.
    static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
    }

    /// Canonical composition, lower case, runs of white space as one space:
    /// "Björk" typed decomposed or composed, in any case, is the same album.
    private static func normalise(_ text: String) -> String {
        let words = text.precomposedStringWithCanonicalMapping.lowercased().split(whereSeparator: { $0.isWhitespace })
        return words.joined(separator: " ")
    }

    /// Lower-case ASCII letters and digits with runs of anything else as one
    /// dash; letters with diacritics lose them (é → e).
    private static func slug(_ text: String) -> String {
        var out = ""
        var pendingDash = false
        for scalar in text.decomposedStringWithCanonicalMapping.lowercased().unicodeScalars {
            if scalar.isASCII, isAlphanumeric(UInt8(scalar.value)) {
                if pendingDash && !out.isEmpty { out.append("-") }
                pendingDash = false
                out.unicodeScalars.append(scalar)
            } else if scalar.properties.generalCategory == .nonspacingMark {
                continue
            } else {
                pendingDash = true
            }
        }
        return out
    }
}

extension String {
    fileprivate var trimmingDashes: String {
        var text = Substring(self)
        while text.hasPrefix("-") { text = text.dropFirst() }
        while text.hasSuffix("-") { text = text.dropLast() }
        return String(text)
    }
}
