@testable import CoverdFetch
@testable import CoverdLookup
@testable import CoverdModel
@testable import CoverdSync
import Foundation
import Testing

/// A job's rarely set fields live out of line, shared until written.
@Suite("Cover job")
struct CoverJobTests {
    private let url = JobKey.url(Self.coverURL("http://covers.test/a.png"))

    private static func coverURL(_ text: String) -> CoverURL {
        do { return try CoverURL(validating: text) } catch { preconditionFailure("\(text): \(error)") }
    }

    @Test("Given a job, when copied and the copy's rare fields are changed, then the original keeps its own")
    func copiesAreIndependent() {
        // Given
        var original = CoverJob(key: url, waiters: [AlbumID(trusted: "a")], phase: .inFlight(FetchID(1)))
        original.lastFailure = ("503", false, 503)

        // When
        var copy = original
        copy.lastFailure = ("404", true, 404)
        copy.lateWaiters.insert(AlbumID(trusted: "b"))
        copy.storageBytes = 10

        // Then
        #expect(original.lastFailure?.message == "503")
        #expect(original.lateWaiters.isEmpty)
        #expect(original.storageBytes == nil)
        #expect(copy.lastFailure?.message == "404")
        #expect(copy.lateWaiters == [AlbumID(trusted: "b")])
        #expect(copy.storageBytes == 10)
    }

    @Test("Given jobs as a first sync makes them, when laid out, then one takes no more than 80 bytes and its key no more than a URL's 24")
    func jobsStaySmall() {
        // A first sync holds one job per album at once, in a table with more buckets than jobs.
        #expect(MemoryLayout<CoverJob>.stride <= 80)
        #expect(MemoryLayout<JobKey>.stride <= 24)
    }

    @Test("Given a job set up with a lookup's find and a full disk's size, when read, then both are there, and cleared they read as unset")
    func initialRareFields() {
        // Given
        let resolution = Resolution(url: Self.coverURL("http://covers.test/b.png"), source: .release, releaseID: nil, releaseGroupID: nil)
        var job = CoverJob(key: url, phase: .staging(FetchID(2)), attempts: 3, storageBytes: 99, resolution: resolution)

        // When
        let before = (job.storageBytes, job.resolution)
        job.storageBytes = nil
        job.resolution = nil

        // Then
        #expect(before.0 == 99)
        #expect(before.1 == resolution)
        #expect(job.storageBytes == nil)
        #expect(job.resolution == nil)
        #expect(job.attempts == 3)
        #expect(!job.copiedOutdated)
    }
}
