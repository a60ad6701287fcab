import Foundation
import CoverdModel
import CoverdSync

/// What `coverd sync` shows of its progress. On a terminal, one line redrawn
/// in place: a bar, albums done of total, covers cached a second, time left,
/// at most ten times a second. Elsewhere (a pipe, a file, cron's mail), a
/// plain line at most once a second, only while the counts change. Then
/// the albums not cached, one a line, and a summary line last.
///
/// Pure: it is given each summary with the time it was seen (seconds on a
/// monotonic clock) and returns the text to write, or nil when nothing is due.
public struct SyncProgressRenderer: Sendable {
    /// Where the text goes.
    public enum Style: Sendable, Equatable {
        /// A terminal `columns` wide: the line is cut short of the last column, so it never wraps.
        case terminal(columns: Int)
        case lines
    }

    public let style: Style
    /// How far back rates look: long enough to smooth out bursts, short enough to follow a change of pace.
    static let window = 5.0
    // A little under a tenth of a second, so that redraws on the sync's 100 ms ticks are not halved by jitter.
    static let redrawInterval = 0.09
    static let lineInterval = 1.0
    static let barWidth = 24

    private struct Sample {
        var time: Double
        var cached: Int
        var done: Int
    }

    private var samples: [Sample] = []
    /// The first summary seen, after the scan: covers cached before it were not this sync's.
    private var first: Sample?
    private var lastWrite: Double?
    /// What was last written: the terminal's line, or the plain line's counts.
    private var lastWritten: String?

    public init(style: Style) {
        self.style = style
    }

    /// The text to write for `summary`, seen at `time`; nil when nothing new is due yet.
    public mutating func update(_ summary: SyncSummary, at time: Double) -> String? {
        record(summary, at: time)
        let soon = lastWrite.map { time - $0 < (style == .lines ? Self.lineInterval : Self.redrawInterval) } ?? false
        guard !soon else { return nil }
        let text: String
        let key: String
        switch style {
        case .terminal(let columns):
            text = "\r" + fit(barLine(summary, coversRate: rate(\.cached), left: timeLeft(summary)), columns) + "\u{1B}[K"
            key = text
        case .lines:
            key = "\(summary.albums) \(summary.cached) \(summary.failed) \(summary.pending)"
            text = plainLine(summary) + "\n"
        }
        guard key != lastWritten else { return nil }
        lastWrite = time
        lastWritten = key
        return text
    }

    /// The last words: the bar's final state and its newline on a terminal,
    /// each album not cached, then the summary line.
    public func finish(_ outcome: SyncOutcome) -> String {
        let summary = outcome.summary
        let seconds = Double(outcome.duration.components.seconds) + Double(outcome.duration.components.attoseconds) / 1e18
        let fetched = max(0, summary.cached - (first?.cached ?? summary.cached))
        let overall = seconds > 0 ? Double(fetched) / seconds : nil
        var text = ""
        if case .terminal(let columns) = style {
            let left = outcome.signal == nil ? "done" : "stopped"
            text += "\r" + fit(barLine(summary, coversRate: overall, left: left), columns) + "\u{1B}[K\n"
        }
        for failure in outcome.listed {
            text += failureLine(failure, givenUp: outcome.givenUp.contains(failure.album.id)) + "\n"
        }
        var line = "\(summary.line); "
        if let signal = outcome.signal {
            line += "interrupted by \(Self.signalName(signal)) after \(Self.seconds(seconds))"
        } else {
            line += "done in \(Self.seconds(seconds))"
            if fetched > 0, let overall { line += ", \(fetched) covers cached at \(Self.rate(overall)) a second" }
            let missing = summary.albums - summary.cached
            if missing > 0 { line += "; \(missing) not cached" + (outcome.listed.isEmpty ? "" : ", listed above") }
        }
        return text + line + "\n"
    }

    // MARK: Lines

    /// `[#####...] 120/456 albums  38.2 covers/s  0:09 left`
    func barLine(_ summary: SyncSummary, coversRate: Double?, left: String) -> String {
        let done = summary.cached + summary.failed
        let fraction = summary.albums == 0 ? 1 : Double(done) / Double(summary.albums)
        let filled = min(Self.barWidth, Int((fraction * Double(Self.barWidth)).rounded(.down)))
        let bar = "[" + String(repeating: "#", count: filled) + String(repeating: ".", count: Self.barWidth - filled) + "]"
        let rate = coversRate.map(Self.rate) ?? "--"
        let revalidating = summary.revalidating > 0 ? "  revalidating \(summary.revalidating) of \(summary.outdated) outdated" : ""
        return "\(bar) \(done)/\(summary.albums) albums  \(rate) covers/s  \(left)\(revalidating)"
    }

    /// `120/456 albums done (118 cached, 2 failed), 336 pending, 38.2 covers/s, 0:09 left`
    func plainLine(_ summary: SyncSummary) -> String {
        let done = summary.cached + summary.failed
        var line = "\(done)/\(summary.albums) albums done (\(summary.cached) cached, \(summary.failed) failed), \(summary.pending) pending"
        if let covers = rate(\.cached) { line += ", \(Self.rate(covers)) covers/s" }
        if summary.pending > 0, let left = estimate(summary) { line += ", \(Self.clock(left)) left" }
        if summary.outdated > 0 { line += ", \(summary.outdated) outdated (\(summary.revalidating) being revalidated)" }
        return line
    }

    func failureLine(_ failure: AlbumFailure, givenUp: Bool) -> String {
        let album = failure.album
        var line = "failed: \(album.id) (\(album.artist) – \(album.title)): \(failure.error)"
        if givenUp {
            let attempts = failure.attempts == 1 ? "1 attempt" : "\(failure.attempts) attempts"
            line += " (still failing after \(attempts): sync gave up; coverd run or the next sync retries it)"
        }
        return line
    }

    // MARK: Rates

    private mutating func record(_ summary: SyncSummary, at time: Double) {
        let sample = Sample(time: time, cached: summary.cached, done: summary.cached + summary.failed)
        if first == nil { first = sample }
        samples.append(sample)
        // One sample older than the window stays, as the base the rates are measured from.
        while samples.count > 2, samples[1].time <= time - Self.window { samples.removeFirst() }
    }

    /// Per second over the window; nil until a second has passed.
    private func rate(_ count: KeyPath<Sample, Int>) -> Double? {
        guard let oldest = samples.first, let latest = samples.last, latest.time - oldest.time >= 1 else { return nil }
        return Double(latest[keyPath: count] - oldest[keyPath: count]) / (latest.time - oldest.time)
    }

    /// Seconds until nothing is pending at the window's pace; nil when unknown (no pace yet, or stalled).
    private func estimate(_ summary: SyncSummary) -> Double? {
        guard let pace = rate(\.done), pace > 0 else { return nil }
        return Double(summary.pending) / pace
    }

    private func timeLeft(_ summary: SyncSummary) -> String {
        if summary.pending == 0 { return "0:00 left" }
        return (estimate(summary).map(Self.clock) ?? "--:--") + " left"
    }

    private func fit(_ line: String, _ columns: Int) -> String {
        columns > 1 && line.count >= columns ? String(line.prefix(columns - 1)) : line
    }

    // MARK: Formats

    /// `0:09`, `12:34`, `1:02:03`.
    static func clock(_ seconds: Double) -> String {
        let total = Int(min(seconds, 359_999).rounded(.up))
        let (hours, minutes, rest) = (total / 3600, total / 60 % 60, total % 60)
        let two = { (value: Int) in value < 10 ? "0\(value)" : "\(value)" }
        return hours > 0 ? "\(hours):\(two(minutes)):\(two(rest))" : "\(minutes):\(two(rest))"
    }

    /// One decimal under 100, whole numbers above.
    static func rate(_ value: Double) -> String {
        value < 100 ? String(format: "%.1f", value) : String(Int(value.rounded()))
    }

    static func seconds(_ value: Double) -> String {
        value < 60 ? String(format: "%.1f s", value) : clock(value)
    }

    static func signalName(_ signal: Int32) -> String {
        switch signal {
        case SIGINT: "SIGINT"
        case SIGTERM: "SIGTERM"
        case SIGHUP: "SIGHUP"
        default: "signal \(signal)"
        }
    }
}
