import Synchronization
import CoverdBase
import CoverdLogging
import CoverdModel

/// Writes `coverd sync`'s progress where it goes: redrawn through the
/// terminal's status line (log lines on the same terminal go above it), or
/// as plain lines to standard output. `SyncProgressRenderer` decides the text.
public final class SyncProgressDisplay: Sendable {
    private let renderer: Mutex<SyncProgressRenderer>
    private let statusLine: TerminalStatusLine?
    private let started = ContinuousClock.now

    /// - Parameter statusLine: for the terminal style; nil writes to standard output as it comes.
    public init(style: SyncProgressRenderer.Style, statusLine: TerminalStatusLine?) {
        renderer = Mutex(SyncProgressRenderer(style: style))
        self.statusLine = statusLine
    }

    /// Shows `summary`, when the renderer says something is due.
    public func show(_ summary: SyncSummary) {
        let elapsed = ContinuousClock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        guard let text = renderer.withLock({ $0.update(summary, at: seconds) }) else { return }
        if let statusLine { statusLine.draw(text) } else { write(text) }
    }

    /// The last words: the final bar, the albums not cached, the summary line.
    public func finish(_ outcome: SyncOutcome) {
        let text = renderer.withLock { $0.finish(outcome) }
        if let statusLine { statusLine.end(text) } else { write(text) }
    }

    private func write(_ text: String) {
        // Standard output gone (a closed pipe) leaves nowhere to say so; the exit status still tells.
        _ = Array(text.utf8).withUnsafeBytes { writeAll($0, to: 1) }
    }
}
