@testable import CoverdBase
@testable import CoverdFetch
@testable import CoverdModel
@testable import CoverdSync
import Foundation
import Testing

/// The planner when things go wrong: HTTP failures and their retries, bodies
/// that are not images, full disks and renames that fail.
extension SyncPlannerTests {
    @Test("Given a 404, when the fetch ends, then the album fails with the reason and is retried after a day")
    mutating func permanentFailure() throws {
        let fetch = try #require(steps.update([try album("x")], on: &planner, now: now).fetches.first)
        let failure = FetchFailure(kind: .http(404), message: "HTTP 404 Not Found", httpStatus: 404)
        let effects = planner.fetchFinished(fetch.0, url: fetch.1, outcome: .failure(failure), now: now)
        let row = try #require(effects.rows.first)
        #expect(row.state == .failed)
        #expect(row.error == "HTTP 404 Not Found")
        #expect(row.nextRetry == now.addingTimeInterval(86_400))
        #expect(effects.posted(CoverFailed.self).first?.permanent == true)
        #expect(planner.nextWakeUp() == now.addingTimeInterval(86_400))
        #expect(planner.summary.failed == 1)
    }

    @Test("Given a 503, when the fetch ends, then the album stays pending and is fetched again when the backoff expires")
    mutating func transientFailure() throws {
        let fetch = try #require(steps.update([try album("x")], on: &planner, now: now).fetches.first)
        let failure = FetchFailure(kind: .http(503), message: "HTTP 503", httpStatus: 503)
        let effects = planner.fetchFinished(fetch.0, url: fetch.1, outcome: .failure(failure), now: now)
        #expect(effects.rows.first?.state == .pending)
        #expect(effects.rows.first?.attempts == 1)
        #expect(planner.nextWakeUp() == now.addingTimeInterval(1))
        #expect(steps.timerFired(on: &planner, now: now.addingTimeInterval(0.5)).fetches.isEmpty)
        let retry = steps.timerFired(on: &planner, now: now.addingTimeInterval(1))
        #expect(retry.fetches.map(\.1) == [fetch.1])
        // The second failure doubles the delay.
        let again = planner.fetchFinished(retry.fetches[0].0, url: fetch.1, outcome: .failure(failure), now: now.addingTimeInterval(1))
        #expect(again.rows.first?.nextRetry == now.addingTimeInterval(3))
    }

    @Test("Given Retry-After, when a transient failure ends, then the retry waits exactly that long")
    mutating func retryAfterHonoured() throws {
        let fetch = try #require(steps.update([try album("x")], on: &planner, now: now).fetches.first)
        let failure = FetchFailure(kind: .http(429), message: "HTTP 429", httpStatus: 429, retryAfter: .seconds(7))
        let effects = planner.fetchFinished(fetch.0, url: fetch.1, outcome: .failure(failure), now: now)
        #expect(effects.rows.first?.nextRetry == now.addingTimeInterval(7))
    }

    @Test("Given a failed album whose record changes, when updated, then it is fetched again at once")
    mutating func changedRecordRetries() throws {
        let fetch = try #require(steps.update([try album("x")], on: &planner, now: now).fetches.first)
        _ = planner.fetchFinished(fetch.0, url: fetch.1, outcome: .failure(FetchFailure(kind: .http(404), message: "404")), now: now)
        let effects = steps.update([try album("x", title: "New title")], on: &planner, now: now)
        #expect(effects.fetches.count == 1)
    }

    @Test("Given a body that is not an image, when staged, then every waiting album fails with that reason")
    mutating func imageFailure() throws {
        let fetch = try #require(steps.update([try album("x")], on: &planner, now: now).fetches.first)
        let request = try #require(planner.fetchFinished(fetch.0, url: fetch.1, outcome: .success(body()), now: now).stages.first)
        let effects = steps.staged(request.fetchID, url: request.url, result: .failure(.image(.notAnImage(.html))), on: &planner, now: now)
        #expect(effects.rows.first?.state == .failed)
        #expect(effects.rows.first?.error == "unsupported image format: html (not an image)")
    }

    @Test("Given a conversion given up because coverd is stopping, when staged, then nothing is recorded: the album is not failed")
    mutating func stoppedConversion() throws {
        let fetch = try #require(steps.update([try album("x")], on: &planner, now: now).fetches.first)
        let request = try #require(planner.fetchFinished(fetch.0, url: fetch.1, outcome: .success(body()), now: now).stages.first)
        let effects = steps.staged(request.fetchID, url: request.url, result: .failure(.stopped), on: &planner, now: now)
        #expect(effects.rows.isEmpty)
        #expect(effects.posted(CoverFailed.self).isEmpty)
        #expect(planner.summary.failed == 0)
    }

    @Test("Given a full disk, when staged, then the album stays pending and is retried within the storage limit")
    mutating func storageFailure() throws {
        planner.policy.storageMaxDelay = .seconds(5)
        var fetchID = try #require(steps.update([try album("x")], on: &planner, now: now).fetches.first).0
        let url = try CoverURL(validating: "http://h/a.png")
        var effects: [SyncEffect] = []
        var time = now
        for _ in 0..<6 {
            let request = try #require(planner.fetchFinished(fetchID, url: url, outcome: .success(body()), now: time).stages.first)
            effects = steps.staged(request.fetchID, url: url, result: .failure(.storage(SystemError("write", path: "/c/x", code: ENOSPC), bytes: 100)), on: &planner, now: time)
            let next = planner.nextWakeUp()
            let due = try #require(next)
            #expect(due.timeIntervalSince(time) <= 5)
            time = due
            fetchID = try #require(steps.timerFired(on: &planner, now: time).fetches.first).0
        }
        #expect(effects.rows.first?.state == .pending)
        #expect(effects.rows.first?.error?.contains("No space left on device") == true)
    }

    @Test("Given a record whose URL changes to one that failed before, when updated, then it is fetched at once")
    mutating func urlChangeOntoFailedURL() throws {
        let bad = try #require(steps.update([try album("x", "http://h/bad.png")], on: &planner, now: now).fetches.first)
        _ = planner.fetchFinished(bad.0, url: bad.1, outcome: .failure(FetchFailure(kind: .http(404), message: "404")), now: now)
        _ = steps.update([try album("y")], on: &planner, now: now)
        let effects = steps.update([try album("y", "http://h/bad.png")], on: &planner, now: now)
        #expect(effects.fetches.map(\.1.string) == ["http://h/bad.png"])
    }

    @Test("Given a failed album retried, when the retry fails transiently, then it is pending again")
    mutating func failedThenTransientIsPending() throws {
        let fetch = try #require(steps.update([try album("x")], on: &planner, now: now).fetches.first)
        _ = planner.fetchFinished(fetch.0, url: fetch.1, outcome: .failure(FetchFailure(kind: .http(404), message: "404")), now: now)
        let retry = try #require(planner.retryAll(now: now).effects.fetches.first)
        let effects = planner.fetchFinished(retry.0, url: retry.1, outcome: .failure(FetchFailure(kind: .http(503), message: "503")), now: now)
        #expect(effects.rows.first?.state == .pending)
        #expect(planner.summary == SyncSummary(albums: 1, cached: 0, pending: 1, failed: 0))
    }

    @Test("Given renames that keep failing, when retried, then the backoff keeps growing")
    mutating func commitFailureBacksOff() throws {
        files.failCommits = true
        var fetchID = try #require(steps.update([try album("x")], on: &planner, now: now).fetches.first).0
        let url = try CoverURL(validating: "http://h/a.png")
        var attempts: [Int] = []
        var time = now
        for _ in 0..<3 {
            let request = try #require(planner.fetchFinished(fetchID, url: url, outcome: .success(body()), now: time).stages.first)
            let effects = steps.staged(request.fetchID, url: url, result: .success(stagedCovers(request)), on: &planner, now: time)
            attempts.append(effects.rows.first?.attempts ?? -1)
            let next = planner.nextWakeUp()
            time = try #require(next)
            fetchID = try #require(steps.timerFired(on: &planner, now: time).fetches.first).0
        }
        #expect(attempts == [1, 2, 3])
    }

    @Test("Given a cover that failed for a full disk, when its retry comes and the disk is still full, then it waits without downloading, and the index says when it looks again")
    mutating func fullDiskWaitsForRoom() throws {
        planner.policy.storageMaxDelay = .seconds(5)
        let fetch = try #require(steps.update([try album("x")], on: &planner, now: now).fetches.first)
        let request = try #require(planner.fetchFinished(fetch.0, url: fetch.1, outcome: .success(body()), now: now).stages.first)
        _ = steps.staged(request.fetchID, url: request.url, result: .failure(.storage(SystemError("write", path: "/c/x", code: ENOSPC), bytes: 100)), on: &planner, now: now)
        files.room = false
        let first = planner.nextWakeUp()
        let due = try #require(first)
        let whileFull = steps.timerFired(on: &planner, now: due)
        #expect(whileFull.fetches.isEmpty && whileFull.stages.isEmpty)
        let second = planner.nextWakeUp()
        let later = try #require(second)
        #expect(later > due)
        #expect(whileFull.rows.map(\.nextRetry) == [later], "status shows the next look, not the one just past")
        #expect(whileFull.rows.first?.state == .pending)
        let waiting = whileFull.posted(CoversWaitingForRoom.self)
        #expect(waiting.count == 1 && waiting.first?.count == 1 && waiting.first?.largestBytes == 100 && waiting.first?.retryAt == later)
        files.room = true
        let afterFreeing = steps.timerFired(on: &planner, now: later)
        #expect(afterFreeing.fetches.count == 1)
    }

    @Test("Given three covers that failed for a full disk at different times, when the disk stays full, then each look is one notice for all three")
    mutating func fullDiskLooksAreShared() throws {
        planner.policy.storageMaxDelay = .seconds(30)
        let albums = try ["x", "y", "z"].map { try album($0, "http://h/\($0).png") }
        let fetches = steps.update(albums, on: &planner, now: now).fetches
        #expect(fetches.count == 3)
        for (offset, fetch) in fetches.enumerated() {
            let time = now.addingTimeInterval(Double(offset) * 0.3)
            let request = try #require(planner.fetchFinished(fetch.0, url: fetch.1, outcome: .success(body(100 + offset)), now: time).stages.first)
            _ = steps.staged(request.fetchID, url: request.url, result: .failure(.storage(SystemError("write", path: "/c/x", code: ENOSPC), bytes: 100 + offset)), on: &planner, now: time)
        }
        files.room = false
        var looks: [CoversWaitingForRoom] = []
        for _ in 0..<3 {
            let wakeUp = planner.nextWakeUp()
            let look = try #require(wakeUp)
            let effects = steps.timerFired(on: &planner, now: look)
            #expect(effects.fetches.isEmpty)
            looks += effects.posted(CoversWaitingForRoom.self)
            #expect(Set(effects.rows.map(\.nextRetry)) == [planner.nextWakeUp()], "every waiting album shows the one next look")
        }
        #expect(looks.map(\.count) == [3, 3, 3])
        #expect(looks.first?.largestBytes == 102)

        // A fourth cover that fails for room between two looks joins the next one.
        let fourth = try #require(steps.update(albums + [try album("w", "http://h/w.png")], on: &planner, now: now).fetches.first)
        let pending = planner.nextWakeUp()
        let between = try #require(pending).addingTimeInterval(-10)
        let request = try #require(planner.fetchFinished(fourth.0, url: fourth.1, outcome: .success(body()), now: between).stages.first)
        _ = steps.staged(request.fetchID, url: request.url, result: .failure(.storage(SystemError("write", path: "/c/w", code: ENOSPC), bytes: 100)), on: &planner, now: between)
        let upcoming = planner.nextWakeUp()
        let nextLook = try #require(upcoming)
        #expect(steps.timerFired(on: &planner, now: nextLook).posted(CoversWaitingForRoom.self).map(\.count) == [4])
    }

    @Test("Given a cover that failed to be stored on a read-only filesystem, when other covers wait for room, then it keeps its own backoff")
    mutating func otherStorageFailuresKeepTheirBackoff() throws {
        planner.policy.storageMaxDelay = .seconds(30)
        let fetches = steps.update([try album("x", "http://h/x.png"), try album("y", "http://h/y.png")], on: &planner, now: now).fetches
        var requests: [StageRequest] = []
        for fetch in fetches {
            requests.append(try #require(planner.fetchFinished(fetch.0, url: fetch.1, outcome: .success(body()), now: now).stages.first))
        }
        let full = steps.staged(requests[0].fetchID, url: requests[0].url, result: .failure(.storage(SystemError("write", path: "/c/x", code: ENOSPC), bytes: 100)), on: &planner, now: now)
        let readOnly = steps.staged(requests[1].fetchID, url: requests[1].url, result: .failure(.storage(SystemError("create", path: "/c/y", code: EROFS), bytes: 100)), on: &planner, now: now.addingTimeInterval(0.5))
        let roomLook = full.rows.first?.nextRetry
        let ownRetry = readOnly.rows.first?.nextRetry
        #expect(roomLook != nil && ownRetry != roomLook)
        #expect(ownRetry?.timeIntervalSince(now.addingTimeInterval(0.5)) == Backoff(policy: planner.policy).delay(attempt: 1, unit: 0.5).seconds)
    }
}
