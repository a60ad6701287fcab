@testable import CoverdDaemon
import CoverdModel
import CoverdSync
import Foundation
import Testing

@Suite("Sync patience")
struct SyncPatienceTests {
    let start = Date(timeIntervalSince1970: 1_800_000_000)

    func failing(_ id: String, state: CoverState = .pending, nextRetry: Date? = nil) throws -> AlbumFailure {
        let album = Album(id: try AlbumID(validating: id), title: id, artist: "A", coverURL: nil, record: "/r/a.json")
        return AlbumFailure(album: album, state: state, error: "HTTP 503", attempts: 1, nextRetry: nextRetry)
    }

    @Test("Given an album failing transiently, retried within the limit, when looked at before and after the limit since it was first seen failing, then it is given up only after")
    func givenUpAfterTheLimit() throws {
        var patience = SyncPatience(limit: 60)
        let flaky = try failing("flaky", nextRetry: start.addingTimeInterval(2))

        // When
        let atFirst = patience.givenUp([flaky], now: start)
        let before = patience.givenUp([flaky], now: start.addingTimeInterval(59))
        let after = patience.givenUp([flaky], now: start.addingTimeInterval(60))

        // Then
        #expect(atFirst.isEmpty && before.isEmpty)
        #expect(after.map(\.rawValue) == ["flaky"])
    }

    @Test("Given an album whose next try comes after the limit (a Retry-After, a long backoff), when first seen, then it is given up at once")
    func givenUpWhenTheNextTryIsTooLate() throws {
        var patience = SyncPatience(limit: 60)

        // When
        let given = patience.givenUp([try failing("later", nextRetry: start.addingTimeInterval(3600))], now: start)

        // Then
        #expect(given.map(\.rawValue) == ["later"])
    }

    @Test("Given an album that recovered and then fails again, when looked at, then its time starts afresh; failed albums are never counted")
    func recoveryStartsAfresh() throws {
        var patience = SyncPatience(limit: 10)
        let flaky = try failing("flaky")
        _ = patience.givenUp([flaky], now: start)
        _ = patience.givenUp([], now: start.addingTimeInterval(5))  // cached meanwhile

        // When
        let again = patience.givenUp([flaky, try failing("gone", state: .failed)], now: start.addingTimeInterval(12))

        // Then
        #expect(again.isEmpty)
        #expect(patience.givenUp([flaky], now: start.addingTimeInterval(22)).map(\.rawValue) == ["flaky"])
    }

    @Test("Given no patience at all (--give-up-after 0), when an album has failed once, then it is given up at once")
    func zeroLimit() throws {
        var patience = SyncPatience(limit: 0)
        #expect(patience.givenUp([try failing("flaky")], now: start).map(\.rawValue) == ["flaky"])
    }
}
