import Synchronization
import CoverdBase

/// A line redrawn in place on a terminal (`coverd sync`'s progress bar on
/// standard output), with log lines written above it: each log line first
/// clears the status line, then the status line is drawn again below it, so
/// neither ends up in the middle of the other when both streams are the same
/// terminal.
///
/// Threading: any thread; one lock orders every write, so a redraw never
/// falls between a log line's clearing and its text.
public final class TerminalStatusLine: Sendable {
    /// The status line as last drawn (with its carriage return and erase), or empty once ended.
    private let drawn = Mutex<[UInt8]>([])
    private let output: Int32

    /// Clears the line: back to its start, then erase to its end.
    static let clear: [UInt8] = Array("\r\u{1B}[K".utf8)

    public init(output: Int32 = 1) {
        self.output = output
    }

    /// Draws `text` (which brings the cursor back to the line's start itself) and keeps it for redraws.
    public func draw(_ text: String) {
        let bytes = Array(text.utf8)
        drawn.withLock { drawn in
            drawn = bytes
            write(bytes, to: output)
        }
    }

    /// Writes `text`, which ends the status line (a newline, and what follows); nothing is redrawn after it.
    public func end(_ text: String) {
        drawn.withLock { drawn in
            drawn = []
            write(Array(text.utf8), to: output)
        }
    }

    /// Writes `line` (whole lines) to `fd` above the status line.
    public func writeAbove(_ line: [UInt8], to fd: Int32) {
        drawn.withLock { drawn in
            guard !drawn.isEmpty else { return write(line, to: fd) }
            write(TerminalStatusLine.clear, to: output)
            write(line, to: fd)
            write(drawn, to: output)
        }
    }

    private func write(_ bytes: [UInt8], to fd: Int32) {
        // A terminal gone away (a closed window) leaves nowhere to say so; the sync itself goes on.
        _ = bytes.withUnsafeBytes { writeAll($0, to: fd) }
    }
}
