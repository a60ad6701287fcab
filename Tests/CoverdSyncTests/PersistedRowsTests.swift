@testable import CoverdCache
@testable import CoverdModel
@testable import CoverdSync
import Foundation
import CoverdTestSupport
import Testing

/// The index rows a restart holds until the records claim them are kept
/// packed; these tests pin that nothing is lost or reordered in the packing.
@Suite("Persisted rows")
struct PersistedRowsTests {
    func row(_ id: String, record: String = "/r/a.json") -> IndexRow {
        var row = IndexRow(
            id: AlbumID(trusted: id), title: "Title of \(id)", artist: "Artist", record: record, state: .cached,
            updatedAt: Date(timeIntervalSince1970: 1_000_000.25))
        row.coverURL = "http://h/\(id).png"
        row.bytes = 1234
        row.fileMTime = 1_700_000_000
        row.httpStatus = 200
        row.source = .url
        row.resolvedURL = row.coverURL
        return row
    }

    /// Every field set, with values at their edges: non-ASCII text, empty
    /// strings, negative and huge numbers, fractional dates.
    func fullRow(_ id: String) -> IndexRow {
        var row = IndexRow(
            id: AlbumID(trusted: id), title: "Ünïcödé – 日本語 🎵", artist: "", record: "/records/ö.json", state: .failed,
            updatedAt: Date(timeIntervalSinceReferenceDate: -12.5))
        row.year = "1999"
        row.genre = "Jazz\u{0}Funk"
        row.coverURL = "https://example.org/a%20b.png?x=1#f"
        row.releaseID = "0a0b0c0d-0000-4000-8000-00000000000a"
        row.releaseGroupID = "0a0b0c0d-0000-4000-8000-00000000000b"
        row.error = "HTTP 404 Not Found"
        row.attempts = Int(Int32.max)
        row.nextRetry = Date(timeIntervalSince1970: 1_763_800_000.123456)
        row.bytes = Int.max
        row.fileMTime = Int64.min
        row.httpStatus = -1
        row.source = .search
        row.foundReleaseID = "0a0b0c0d-0000-4000-8000-00000000000c"
        row.foundReleaseGroupID = "0a0b0c0d-0000-4000-8000-00000000000d"
        row.resolvedURL = "https://coverartarchive.org/release-group/0a0b0c0d-0000-4000-8000-00000000000d/front-500"
        return row
    }

    /// A pending row that has never been fetched: every optional absent.
    func bareRow(_ id: String) -> IndexRow {
        IndexRow(id: AlbumID(trusted: id), title: "", artist: "A", record: "/r/b.json", state: .pending, updatedAt: Date(timeIntervalSince1970: 0))
    }

    @Test func givenRowsWithEveryFieldOrNoneWhenClaimedThenEachComesBackUnchanged() {
        // Given: every state, every optional present and absent, two record files
        let rows = [fullRow("a1"), row("b2"), bareRow("b3"), fullRow("c3")]
        var persisted = PersistedRows(rows)
        // When
        let claimed = rows.map { persisted.claim($0.id) }
        // Then
        #expect(claimed == rows)
        #expect(persisted.unclaimedCount == 0)
    }

    @Test func givenAClaimedRowWhenClaimedAgainThenNothingIsReturned() {
        // Given
        var persisted = PersistedRows([row("a"), row("b")])
        #expect(persisted.claim(AlbumID(trusted: "a")) == row("a"))
        // When
        let again = persisted.claim(AlbumID(trusted: "a"))
        // Then
        #expect(again == nil)
        #expect(persisted.claim(AlbumID(trusted: "zzz")) == nil)
        #expect(persisted.unclaimedCount == 1)
    }

    @Test func givenRowsOutOfOrderWithATwiceLoadedIdWhenTakenThenSortedAndTheFirstLoadedWins() {
        // Given
        var persisted = PersistedRows()
        persisted.append(row("m", record: "/r/first.json"))
        persisted.append(row("c"))
        persisted.append(row("m", record: "/r/second.json"))
        persisted.append(row("a"))
        // When
        let claimedC = persisted.claim(AlbumID(trusted: "c"))
        let left = persisted.takeUnclaimed()
        // Then
        #expect(claimedC == row("c"))
        #expect(left.map(\.id.rawValue) == ["a", "m"])
        #expect(left.last?.record == "/r/first.json")
        #expect(persisted.unclaimedCount == 0)
        #expect(persisted.takeUnclaimed().isEmpty)
    }

    @Test func givenIdsThatShareAPrefixWhenClaimedThenTheExactIdIsFound() {
        // Given: ids ordered as SQLite orders them (bytewise), some prefixes of others
        let ids = ["a", "a-1", "a.b", "a0", "aa", "b", "B"].sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
        var persisted = PersistedRows(ids.map { row($0) })
        // When / Then
        for id in ids.reversed() { #expect(persisted.claim(AlbumID(trusted: id))?.id.rawValue == id) }
        #expect(persisted.unclaimedCount == 0)
    }

    @Test func givenPrefixIdsLoadedOutOfOrderWhenTakenThenTheyComeInBytewiseOrder() {
        // Given
        let shuffled = ["aa", "a", "B", "a0", "a.b", "b", "a-1"]
        var persisted = PersistedRows(shuffled.map { row($0) })
        // When
        #expect(persisted.claim(AlbumID(trusted: "a0")) == row("a0"))
        let left = persisted.takeUnclaimed().map(\.id.rawValue)
        // Then
        #expect(left == ["B", "a", "a-1", "a.b", "aa", "b"])
    }

    @Test func givenManyRowsWhenPackedThenTheyTakeLessThanHalfOfTheRowsThemselves() {
        // Given: rows whose strings (a 45-byte URL) live on the heap, as in a real index
        let rows = (0..<10_000).map { row(String(format: "album%06d", $0)) }
        let unpacked = rows.count * MemoryLayout<IndexRow>.stride + rows.count * 64  // The URL's heap block.
        // When
        let persisted = PersistedRows(rows)
        // Then
        #expect(persisted.packedBytes * 2 < unpacked, "\(persisted.packedBytes) packed against \(unpacked)")
    }

    @Test func givenRowsClaimedInRandomOrderWhenClaimedThenClaimsAndLeftoversMatchAPlainModel() {
        // Given: rows loaded in id order (as the index gives them) or out of
        // order with repeats; claims in a random order with repeats and strangers
        for round in 0..<40 {
            var generator = SplitMix64(seed: UInt64(round))  // A failure names its round, and replays.
            var ids = (0..<Int.random(in: 1...600, using: &generator)).map { _ in "id\(Int.random(in: 0..<500, using: &generator))" }
            if round % 2 == 0 { ids = Set(ids).sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) } }
            var persisted = PersistedRows()
            var model: [String: IndexRow] = [:]
            for (index, id) in ids.enumerated() {
                persisted.append(row(id, record: "/r/\(index % 3).json"))
                if model[id] == nil { model[id] = row(id, record: "/r/\(index % 3).json") }
            }
            // When / Then
            for _ in 0..<Int.random(in: 0...900, using: &generator) {
                let id = "id\(Int.random(in: 0..<520, using: &generator))"
                let claimed = persisted.claim(AlbumID(trusted: id))
                #expect(claimed == model[id], "round \(round)")
                model[id] = nil
                #expect(persisted.unclaimedCount == model.count, "round \(round)")
            }
            let left = persisted.takeUnclaimed()
            let expected = model.keys.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }.compactMap { model[$0] }
            #expect(left == expected, "round \(round)")
        }
    }
}
