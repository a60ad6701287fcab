/// Where in its record file an album was read: "album 3 (line 12)".
///
/// Every album carries one, for messages only; kept as two numbers and
/// formatted when asked, since a formatted string per album costs memory.
public struct RecordPosition: Sendable, Hashable, CustomStringConvertible {
    /// 1-based entry in a list; 0 for a file holding one album; negative for the special cases.
    private let entry: Int32
    /// 1-based line in a text record; 0 where there are no lines (binary archives).
    private let line: Int32

    private init(entry: Int32, line: Int32) {
        self.entry = entry
        self.line = line
    }

    /// The `number`th album of a list (1-based), on `line` of a text record.
    public static func entry(_ number: Int, line: Int? = nil) -> RecordPosition {
        RecordPosition(entry: Int32(clamping: max(number, 1)), line: Int32(clamping: max(line ?? 0, 0)))
    }

    /// The one album of a file that holds a single object, on `line`.
    public static func single(line: Int) -> RecordPosition {
        RecordPosition(entry: 0, line: Int32(clamping: max(line, 0)))
    }

    /// The album's 1-based number in its file's list; nil for a file's single album and the special cases.
    public var listEntry: Int? { entry > 0 ? Int(entry) : nil }

    /// Whether the album is its file's one object (not an entry of a list).
    public var isSingle: Bool { entry == 0 }

    /// An album known only from the index (its record could not be read).
    public static let fromIndex = RecordPosition(entry: -1, line: 0)

    /// No position (an album made on the command line).
    public static let unspecified = RecordPosition(entry: -2, line: 0)

    public var description: String {
        switch entry {
        case -1: return "from the index"
        case ..<0: return ""
        case 0: return "album (line \(line))"
        default: return line > 0 ? "album \(entry) (line \(line))" : "album \(entry)"
        }
    }
}
