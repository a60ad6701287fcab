@testable import CoverdCache
@testable import CoverdModel
@testable import CoverdSync
import Foundation
import Testing

/// The planner keeps one `TrackedAlbum` per album in a dictionary; at
/// 100,000 albums each byte of it is 262,144 bytes of buckets. These tests pin
/// its size and that the packing loses nothing.
@Suite("Tracked album")
struct TrackedAlbumTests {
    func album(_ id: String = "a1") throws -> Album {
        Album(id: try AlbumID(validating: id), title: "T", artist: "A", coverURL: try CoverURL(validating: "http://h/a.png"), record: "/r/a.json")
    }

    @Test func givenTheTrackedTableWhenItsEntryIsMeasuredThenItTakesAtMost32Bytes() {
        // Given: the planner's table of 100,000 albums, 262,144 buckets
        // When: an entry is measured
        let stride = MemoryLayout<TrackedAlbum>.stride
        // Then: with the 16-byte id key, 48 bytes a bucket, not 72
        #expect(stride <= 32)
    }

    @Test func givenACachedAlbumWhenItsStampAndStatusAreSetThenTheyReadBackWithNoFailureDetails() throws {
        // Given
        var entry = TrackedAlbum(album: try album(), state: .cached)
        // When
        entry.stamp = FileStamp(bytes: 123_456, mtime: 1_763_800_000_123_456_789)
        entry.httpStatus = 200
        // Then
        #expect(entry.stamp == FileStamp(bytes: 123_456, mtime: 1_763_800_000_123_456_789))
        #expect(entry.httpStatus == 200)
        #expect(entry.attempts == 0 && entry.error == nil && entry.nextRetry == nil)
        #expect(!entry.hasFailureDetails)
    }

    @Test func givenStampsAtTheEdgesWhenStoredThenEachReadsBackExactly() throws {
        // Given: sizes around the 32-bit boundary and beyond, mtimes at both ends
        let stamps = [
            FileStamp(bytes: 0, mtime: 0), FileStamp(bytes: Int(UInt32.max) - 1, mtime: -1),
            FileStamp(bytes: Int(UInt32.max), mtime: Int64.max), FileStamp(bytes: 1 << 40, mtime: Int64.min),
        ]
        for stamp in stamps {
            var entry = TrackedAlbum(album: try album(), state: .cached)
            // When
            entry.stamp = stamp
            // Then
            #expect(entry.stamp == stamp)
            entry.stamp = nil
            #expect(entry.stamp == nil)
            #expect(!entry.hasFailureDetails)
        }
    }

    @Test func givenAHugeStampAndAFailureWhenTheFailureIsClearedThenTheStampStaysAndGoesWithItsBoxWhenSmall() throws {
        // Given: a cover of 5 GiB (its size boxed) that failed once
        var entry = TrackedAlbum(album: try album(), state: .failed)
        let huge = FileStamp(bytes: 5 << 30, mtime: 42)
        entry.stamp = huge
        entry.attempts = 1
        entry.error = "HTTP 500"
        // When: the failure is cleared
        entry.attempts = 0
        entry.error = nil
        // Then: the size is kept, in its box
        #expect(entry.stamp == huge)
        #expect(entry.hasFailureDetails)
        // When: the stamp becomes small, then the box has nothing left to hold
        entry.stamp = FileStamp(bytes: 10, mtime: 43)
        #expect(entry.stamp == FileStamp(bytes: 10, mtime: 43))
        #expect(!entry.hasFailureDetails)
    }

    @Test func givenAFailureWhenTheAlbumIsCopiedAndTheCopyChangedThenTheOriginalKeepsItsValues() throws {
        // Given: an album that failed twice
        var original = TrackedAlbum(album: try album(), state: .failed)
        let due = Date(timeIntervalSinceReferenceDate: 1_000.5)
        original.attempts = 2
        original.error = "HTTP 503"
        original.nextRetry = due
        original.httpStatus = 503
        // When: a copy is changed (the planner copies an entry out of its table and writes it back)
        var copy = original
        copy.attempts = 3
        copy.error = "HTTP 500"
        copy.nextRetry = nil
        // Then
        #expect(original.attempts == 2 && original.error == "HTTP 503" && original.nextRetry == due && original.httpStatus == 503)
        #expect(copy.attempts == 3 && copy.error == "HTTP 500" && copy.nextRetry == nil)
    }

    @Test func givenAFailureWhenItIsClearedThenNoDetailsAreKept() throws {
        // Given
        var entry = TrackedAlbum(album: try album(), state: .failed)
        entry.attempts = Int(Int32.max) + 5
        entry.error = "timed out"
        entry.nextRetry = Date(timeIntervalSinceReferenceDate: 7)
        #expect(entry.attempts == Int(Int32.max))
        // When: the cover is cached after all
        entry.error = nil
        entry.attempts = 0
        entry.nextRetry = nil
        // Then
        #expect(!entry.hasFailureDetails)
        #expect(entry.error == nil && entry.attempts == 0 && entry.nextRetry == nil)
    }
}
