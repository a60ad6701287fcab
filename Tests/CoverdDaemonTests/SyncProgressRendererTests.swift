@testable import CoverdDaemon
import CoverdModel
import CoverdSync
import Foundation
import Testing

@Suite("Sync progress renderer")
struct SyncProgressRendererTests {
    func summary(albums: Int, cached: Int, failed: Int = 0) -> SyncSummary {
        SyncSummary(albums: albums, cached: cached, pending: albums - cached - failed, failed: failed)
    }

    func album(_ id: String, _ title: String) throws -> Album {
        Album(id: try AlbumID(validating: id), title: title, artist: "Artist", coverURL: nil, record: "/r/a.json")
    }

    @Test("Given plain lines, when summaries come every tenth of a second, then a line is written at once and then at most once a second, only when the counts changed")
    func plainLinesAtMostOnceASecond() {
        var renderer = SyncProgressRenderer(style: .lines)

        // When
        var written: [(Double, String)] = []
        for tick in 0...30 {
            let time = Double(tick) / 10
            // Counts change until 2.0 s, then stay.
            let cached = min(tick, 20)
            if let text = renderer.update(summary(albums: 40, cached: cached), at: time) { written.append((time, text)) }
        }

        // Then
        #expect(written.map(\.0) == [0.0, 1.0, 2.0])
        #expect(written[0].1 == "0/40 albums done (0 cached, 0 failed), 40 pending\n")
        #expect(written.allSatisfy { $0.1.hasSuffix("\n") && !$0.1.contains("\r") })
    }

    @Test("Given plain lines over two seconds at ten covers a second, when the next line is due, then it gives the rate and the time left at that pace")
    func plainLineRateAndTimeLeft() {
        var renderer = SyncProgressRenderer(style: .lines)
        _ = renderer.update(summary(albums: 100, cached: 0), at: 0)
        _ = renderer.update(summary(albums: 100, cached: 10), at: 1)

        // When
        let line = renderer.update(summary(albums: 100, cached: 18, failed: 2), at: 2)

        // Then
        #expect(line == "20/100 albums done (18 cached, 2 failed), 80 pending, 9.0 covers/s, 0:08 left\n")
    }

    @Test("Given a terminal, when summaries come faster than ten a second, then each redraw goes back to the line's start, erases its end, and comes at most every 0.09 s")
    func terminalRedrawsInPlace() {
        var renderer = SyncProgressRenderer(style: .terminal(columns: 120))

        // When
        var times: [Double] = []
        var texts: [String] = []
        for tick in 0..<50 {
            let time = Double(tick) / 50
            if let text = renderer.update(summary(albums: 50, cached: tick), at: time) {
                times.append(time)
                texts.append(text)
            }
        }

        // Then
        #expect(texts.count >= 9 && texts.count <= 11)
        #expect(zip(times, times.dropFirst()).allSatisfy { $1 - $0 >= 0.09 - 1e-9 })
        #expect(texts.allSatisfy { $0.hasPrefix("\r[") && $0.hasSuffix("\u{1B}[K") && !$0.contains("\n") })
        #expect(texts[0] == "\r[........................] 0/50 albums  -- covers/s  --:-- left\u{1B}[K")
    }

    @Test("Given a terminal, when half the albums are done, then the bar is half full and shows done of total, the rate and the time left")
    func barShowsProgress() {
        var renderer = SyncProgressRenderer(style: .terminal(columns: 120))
        _ = renderer.update(summary(albums: 40, cached: 0), at: 0)

        // When
        let text = renderer.update(summary(albums: 40, cached: 20), at: 2)

        // Then
        #expect(text == "\r[############............] 20/40 albums  10.0 covers/s  0:02 left\u{1B}[K")
    }

    @Test("Given a narrow terminal, when the line is drawn, then it is cut short of the last column, so it never wraps")
    func narrowTerminal() {
        var renderer = SyncProgressRenderer(style: .terminal(columns: 30))

        // When
        let text = renderer.update(summary(albums: 40, cached: 1), at: 0)

        // Then
        #expect(text == "\r[........................] 1/\u{1B}[K")
    }

    @Test("Given a sync done with a failed album and one given up, when finished on a terminal, then the bar ends its line, each is listed with id, artist – title and reason, and the summary line is last")
    func finishListsWhatIsNotCached() throws {
        var renderer = SyncProgressRenderer(style: .terminal(columns: 200))
        _ = renderer.update(summary(albums: 4, cached: 0), at: 0)
        let gone = AlbumFailure(album: try album("gone", "Gone"), state: .failed, error: "HTTP 404 Not Found", attempts: 1, nextRetry: nil)
        let flaky = AlbumFailure(album: try album("flaky", "Flaky"), state: .pending, error: "HTTP 503", attempts: 4, nextRetry: nil)
        let outcome = SyncOutcome(
            summary: SyncSummary(albums: 4, cached: 2, pending: 1, failed: 1), failures: [flaky, gone], givenUp: [flaky.album.id],
            signal: nil, duration: .seconds(4))

        // When
        let text = renderer.finish(outcome)

        // Then
        #expect(text == """
            \r[##################......] 3/4 albums  0.5 covers/s  done\u{1B}[K
            failed: flaky (Artist – Flaky): HTTP 503 (still failing after 4 attempts: sync gave up; coverd run or the next sync retries it)
            failed: gone (Artist – Gone): HTTP 404 Not Found
            4 albums: 2 cached, 1 pending, 1 failed; done in 4.0 s, 2 covers cached at 0.5 a second; 2 not cached, listed above

            """)
        #expect(outcome.exitStatus == 1)
    }

    @Test("Given every album cached before the sync began, when finished on a pipe, then only the summary line is written, without a rate")
    func finishWithNothingFetched() {
        var renderer = SyncProgressRenderer(style: .lines)
        _ = renderer.update(summary(albums: 3, cached: 3), at: 0)
        let outcome = SyncOutcome(summary: summary(albums: 3, cached: 3), failures: [], givenUp: [], signal: nil, duration: .milliseconds(250))

        // When
        let text = renderer.finish(outcome)

        // Then
        #expect(text == "3 albums: 3 cached, 0 pending, 0 failed; done in 0.2 s\n")
        #expect(outcome.exitStatus == 0)
    }

    @Test("Given a sync stopped by SIGINT, when finished, then the summary says so and the exit status is 130")
    func finishInterrupted() {
        var renderer = SyncProgressRenderer(style: .lines)
        _ = renderer.update(summary(albums: 10, cached: 0), at: 0)
        let outcome = SyncOutcome(summary: summary(albums: 10, cached: 4), failures: [], givenUp: [], signal: SIGINT, duration: .milliseconds(1500))

        // When
        let text = renderer.finish(outcome)

        // Then
        #expect(text == "10 albums: 4 cached, 6 pending, 0 failed; interrupted by SIGINT after 1.5 s\n")
        #expect(outcome.exitStatus == 130)
        #expect(SyncOutcome(summary: outcome.summary, failures: [], givenUp: [], signal: SIGTERM, duration: .zero).exitStatus == 143)
    }

    @Test("Given durations, when shown as time left, then minutes and seconds, with hours beyond an hour, rounded up")
    func clockFormat() {
        #expect(SyncProgressRenderer.clock(0) == "0:00")
        #expect(SyncProgressRenderer.clock(8.2) == "0:09")
        #expect(SyncProgressRenderer.clock(754) == "12:34")
        #expect(SyncProgressRenderer.clock(3723) == "1:02:03")
    }

    @Test("Given nothing pending but outdated covers being revalidated, when rendered, then the line and the bar say how many")
    func revalidationsAreShown() {
        let renderer = SyncProgressRenderer(style: .lines)
        var waiting = summary(albums: 10, cached: 10)
        waiting.outdated = 5
        waiting.revalidating = 2
        #expect(renderer.plainLine(waiting).hasSuffix(", 5 outdated (2 being revalidated)"), "\(renderer.plainLine(waiting))")
        #expect(renderer.barLine(waiting, coversRate: nil, left: "0:00 left").hasSuffix("revalidating 2 of 5 outdated"))
        #expect(!renderer.plainLine(summary(albums: 10, cached: 10)).contains("outdated"))
    }
}
