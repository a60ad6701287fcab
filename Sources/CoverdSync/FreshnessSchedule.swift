import CoverdFetch
import CoverdModel
import Foundation

/// When each cached cover was last confirmed, its validators, and when it is
/// next to be revalidated (contract §8). A cover is *outdated* once
/// `maxAge` has passed since it was confirmed, or once `coverd refresh`
/// asked; it is revalidated at a time drawn a little past that (up to a
/// tenth of `maxAge` later), so covers cached in the same minute do not all
/// come due in the same minute.
///
/// The due times are a `DueHeap` with lazy deletion, as the retries': each
/// entry carries the token its cover had when it was scheduled, and a popped
/// entry whose token no longer matches is skipped. `maxAge` zero: never due.
struct FreshnessSchedule {
    /// One cached cover's freshness, packed: a library of 100,000 covers keeps one each.
    struct Entry {
        var checkedAt: Date
        /// Where its validators' bytes are in `validatorBytes`.
        var validators: ValidatorSpan
        /// Revalidations failed in a row, for the backoff of the next.
        var failures: UInt16 = 0
        /// Set by `coverd refresh` (or a failed revalidation): outdated whatever its age.
        var asked = false
        var token: UInt32 = 0
    }

    /// An ETag and a Last-Modified, as lengths of bytes at an offset (a length of 0xFFFF: none).
    struct ValidatorSpan {
        var offset: UInt32
        var etag: UInt16
        var lastModified: UInt16
    }

    private struct Due: DueTimed {
        var due: Date
        var id: AlbumID
        var token: UInt32
    }

    private(set) var entries: [AlbumID: Entry] = [:]
    /// Every cover's validators back to back: two strings per cover were most of what freshness cost a large library.
    private var validatorBytes: [UInt8] = []
    /// Bytes of `validatorBytes` no entry points at any more, reclaimed when they are most of it.
    private var unusedBytes = 0
    /// Covers taken due, asked for, or failing to revalidate, and not confirmed since: the daemon's
    /// count of outdated covers, kept as they change (the exact age test is `isOutdated`).
    private(set) var outdated: Set<AlbumID> = []
    private var heap = DueHeap<Due>()
    private var nextToken: UInt32 = 0
    /// `freshness.max_age`; zero: covers never go out of date.
    private(set) var maxAge: Duration

    init(maxAge: Duration) {
        self.maxAge = maxAge
    }

    func entry(_ id: AlbumID) -> Entry? { entries[id] }

    /// `id`'s validators, as the server sent them; empty when it is not cached.
    func validators(_ id: AlbumID) -> Validators {
        guard let span = entries[id]?.validators else { return Validators(etag: nil, lastModified: nil) }
        return validators(at: span)
    }

    /// Room for `count` covers, so that a start over a large library grows nothing as it loads.
    mutating func reserve(_ count: Int) {
        entries.reserveCapacity(count)
        if maxAge > .zero { heap.reserveCapacity(count) }
    }

    /// Whether `id`'s cover is outdated at `now`.
    func isOutdated(_ id: AlbumID, now: Date) -> Bool {
        guard let entry = entries[id] else { return false }
        return entry.asked || (maxAge > .zero && entry.checkedAt.addingTimeInterval(maxAge.seconds) <= now)
    }

    /// A cover downloaded or confirmed at `checkedAt`: due again after `maxAge` and its jitter (`unit` in 0..<1).
    mutating func confirm(_ id: AlbumID, at checkedAt: Date, validators: Validators, unit: Double) {
        if let old = entries[id] { unusedBytes += length(of: old.validators) }
        var entry = Entry(checkedAt: checkedAt, validators: store(validators))
        entry.token = newToken()
        entries[id] = entry
        compactIfMostlyUnused()
        outdated.remove(id)
        guard maxAge > .zero else { return }
        push(Due(due: checkedAt.addingTimeInterval(maxAge.seconds * (1 + 0.1 * unit)), id: id, token: entry.token))
    }

    /// A revalidation failed: the cover stays as it was, outdated, and is tried again at `retryAt`.
    mutating func failed(_ id: AlbumID, retryAt: Date) {
        guard var entry = entries[id] else { return }
        if entry.failures < .max { entry.failures += 1 }
        entry.asked = true
        entry.token = newToken()
        entries[id] = entry
        outdated.insert(id)
        push(Due(due: retryAt, id: id, token: entry.token))
    }

    /// Asks again at `until`, nothing else changed (its job's revalidation was
    /// past taking it along, or was cancelled, or it cannot be asked now).
    mutating func postpone(_ id: AlbumID, until: Date) {
        guard var entry = entries[id] else { return }
        entry.token = newToken()
        entries[id] = entry
        push(Due(due: until, id: id, token: entry.token))
    }

    /// `coverd refresh`: outdated now, and due at once.
    mutating func ask(_ id: AlbumID, now: Date) {
        guard var entry = entries[id] else { return }
        entry.asked = true
        entry.failures = 0
        entry.token = newToken()
        entries[id] = entry
        outdated.insert(id)
        push(Due(due: now, id: id, token: entry.token))
    }

    /// The cover is no longer cached (its album left, its URL changed, it was erased).
    mutating func forget(_ id: AlbumID) {
        if let old = entries.removeValue(forKey: id) { unusedBytes += length(of: old.validators) }
        outdated.remove(id)
    }

    /// When the next revalidation is due, if any.
    mutating func nextDue() -> Date? {
        dropStale()
        return heap.earliest?.due
    }

    /// The next cover due by `now`, taken off the schedule (it is scheduled
    /// again when its revalidation ends); nil when none is.
    mutating func takeDue(now: Date) -> AlbumID? {
        guard let next = nextDue(), next <= now, let top = heap.pop() else { return nil }
        if var entry = entries[top.id] {
            entry.token = newToken()  // Any other entry of it in the heap is stale now.
            entries[top.id] = entry
            outdated.insert(top.id)
        }
        return top.id
    }

    /// A new `maxAge` (a reload): every cover is rescheduled from when it was last confirmed.
    mutating func setMaxAge(_ newValue: Duration, unit: () -> Double) {
        guard newValue != maxAge else { return }
        maxAge = newValue
        heap = DueHeap()
        for (id, var entry) in entries {
            entry.token = newToken()
            entries[id] = entry
            if entry.asked {
                push(Due(due: .distantPast, id: id, token: entry.token))
            } else if newValue > .zero {
                push(Due(due: entry.checkedAt.addingTimeInterval(newValue.seconds * (1 + 0.1 * unit())), id: id, token: entry.token))
            }
        }
    }

    private mutating func newToken() -> UInt32 {
        // Wrapping: a stale heap entry would need 2^32 newer tokens to pass for a live one.
        nextToken &+= 1
        return nextToken
    }

    private static let absent = UInt16.max

    private mutating func store(_ validators: Validators) -> ValidatorSpan {
        let offset = UInt32(truncatingIfNeeded: validatorBytes.count)
        var span = ValidatorSpan(offset: offset, etag: Self.absent, lastModified: Self.absent)
        // Validators are at most 256 bytes (HTTPHeaderLine): a length always fits.
        if let etag = validators.etag {
            validatorBytes += etag.utf8
            span.etag = UInt16(truncatingIfNeeded: etag.utf8.count)
        }
        if let lastModified = validators.lastModified {
            validatorBytes += lastModified.utf8
            span.lastModified = UInt16(truncatingIfNeeded: lastModified.utf8.count)
        }
        return span
    }

    private func validators(at span: ValidatorSpan) -> Validators {
        let start = Int(span.offset)
        let etagLength = span.etag == Self.absent ? 0 : Int(span.etag)
        let etag = span.etag == Self.absent ? nil : String(decoding: validatorBytes[start..<start + etagLength], as: UTF8.self)
        let lastModified = span.lastModified == Self.absent
            ? nil : String(decoding: validatorBytes[(start + etagLength)..<(start + etagLength + Int(span.lastModified))], as: UTF8.self)
        return Validators(etag: etag, lastModified: lastModified)
    }

    private func length(of span: ValidatorSpan) -> Int {
        (span.etag == Self.absent ? 0 : Int(span.etag)) + (span.lastModified == Self.absent ? 0 : Int(span.lastModified))
    }

    /// Copies the live validators into a new buffer once unused bytes are most of it.
    private mutating func compactIfMostlyUnused() {
        guard unusedBytes > 1 << 16, unusedBytes * 2 > validatorBytes.count else { return }
        let old = self
        validatorBytes = []
        validatorBytes.reserveCapacity(old.validatorBytes.count - old.unusedBytes)
        unusedBytes = 0
        for (id, var entry) in old.entries {
            entry.validators = store(old.validators(at: entry.validators))
            entries[id] = entry
        }
    }

    /// Pops entries of covers forgotten or rescheduled since.
    private mutating func dropStale() {
        while let top = heap.earliest, entries[top.id]?.token != top.token { _ = heap.pop() }
    }

    private mutating func push(_ entry: Due) {
        // Stale entries (rescheduled covers) are dropped only as they reach the top: the heap
        // keeps only live ones when stale ones are most of it.
        if heap.count > 2 * entries.count + 1024 { heap.retain { entries[$0.id]?.token == $0.token } }
        heap.push(entry)
    }
}
