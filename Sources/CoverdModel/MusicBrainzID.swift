/// A MusicBrainz identifier, a release's or a release group's: a UUID
/// (`xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`, hexadecimal, any case), kept
/// lower-case so that the same id written two ways is one id.
public struct MusicBrainzID: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let rawValue: String

    /// Nil when `text` is not a UUID.
    public init?(_ text: String) {
        let bytes = Array(text.utf8)
        guard bytes.count == 36 else { return nil }
        for (offset, byte) in bytes.enumerated() {
            if offset == 8 || offset == 13 || offset == 18 || offset == 23 {
                guard byte == UInt8(ascii: "-") else { return nil }
            } else {
                guard MusicBrainzID.isHexDigit(byte) else { return nil }
            }
        }
        rawValue = String(decoding: bytes.map { (0x41...0x46).contains($0) ? $0 | 0x20 : $0 }, as: UTF8.self)
    }

    public var description: String { rawValue }

    public static func < (lhs: MusicBrainzID, rhs: MusicBrainzID) -> Bool { lhs.rawValue < rhs.rawValue }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte)
    }
}
