import Foundation
import CoverdCache
import CoverdModel

/// One album the daemon tracks, with its cover's state.
///
/// Packed into 32 bytes: the planner keeps one per album in a dictionary
/// with more buckets than albums, so each byte here counts several times
/// over at the start-up's memory peak. What only a failing
/// album has (attempts, error, retry time) lives in a box that a cached
/// album never allocates; the HTTP status stays inline, since a cached
/// album keeps its 200. A failing album pays for its box (about 80 bytes),
/// and the planner, which copies an entry out, changes it and writes it back,
/// makes a new box at each failure: failures are the exception, and a round
/// of them already costs a request and a log line per URL. The box is a
/// class, so the entry is not `Sendable`: it lives in the planner, behind the
/// coordinator's lock, and is never sent.
struct TrackedAlbum {
    var album: Album
    private var details: FailureDetails?
    private var stampMTime: Int64 = 0
    /// The stamp's size, or `noStamp`; a size that does not fit is in `details`.
    private var stampBytes: UInt32 = TrackedAlbum.noStamp
    private var storedHTTPStatus: Int16 = -1
    var state: CoverState
    /// Known only from the index: its record file exists but cannot be read.
    var restored = false

    private static let noStamp = UInt32.max
    private static let sizeInDetails = UInt32.max - 1

    init(album: Album, state: CoverState) {
        self.album = album
        self.state = state
    }

    var attempts: Int {
        get { Int(details?.values.attempts ?? 0) }
        set { updateDetails { $0.attempts = Int32(clamping: newValue) } }
    }

    var error: String? {
        get { details?.values.error }
        set { updateDetails { $0.error = newValue } }
    }

    var nextRetry: Date? {
        get { details?.values.nextRetry }
        set { updateDetails { $0.nextRetry = newValue } }
    }

    var httpStatus: Int? {
        get { storedHTTPStatus < 0 ? nil : Int(storedHTTPStatus) }
        set { storedHTTPStatus = newValue.map { Int16(clamping: $0) } ?? -1 }
    }

    var stamp: FileStamp? {
        get {
            switch stampBytes {
            case Self.noStamp: return nil
            case Self.sizeInDetails:
                assert(details?.values.largeStampBytes != nil, "a stamp's size marked as boxed without a box")
                return FileStamp(bytes: details?.values.largeStampBytes ?? 0, mtime: stampMTime)
            default: return FileStamp(bytes: Int(stampBytes), mtime: stampMTime)
            }
        }
        set {
            stampMTime = newValue?.mtime ?? 0
            let bytes = newValue?.bytes
            let small = bytes.flatMap { UInt32(exactly: $0) }.flatMap { $0 < Self.sizeInDetails ? $0 : nil }
            stampBytes = small ?? (bytes == nil ? Self.noStamp : Self.sizeInDetails)
            let large = small == nil ? bytes : nil
            if details?.values.largeStampBytes != large { updateDetails { $0.largeStampBytes = large } }
        }
    }

    /// Whether a box is allocated: for tests, which pin that a cached album has none.
    var hasFailureDetails: Bool { details != nil }

    /// Copy-on-write: entries are copied out of the planner's table, changed
    /// and written back, so a shared box is copied before it changes. An
    /// empty box is dropped.
    private mutating func updateDetails(_ change: (inout FailureDetails.Values) -> Void) {
        var values = details?.values ?? FailureDetails.Values()
        change(&values)
        if values.isEmpty {
            details = nil
        } else if isKnownUniquelyReferenced(&details), let box = details {
            box.values = values
        } else {
            details = FailureDetails(values)
        }
    }
}

/// The fields of a `TrackedAlbum` that only a failing album (or a cover
/// file whose size does not fit in 32 bits less the two markers) has.
private final class FailureDetails {
    /// The fields themselves; all at their defaults means no box is needed.
    struct Values {
        var attempts: Int32 = 0
        var error: String?
        var nextRetry: Date?
        var largeStampBytes: Int?

        var isEmpty: Bool { attempts == 0 && error == nil && nextRetry == nil && largeStampBytes == nil }
    }

    var values: Values

    init(_ values: Values) { self.values = values }
}
