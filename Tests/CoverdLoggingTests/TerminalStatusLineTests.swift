import CoverdLogging
import Foundation
import Testing

@Suite("Terminal status line")
struct TerminalStatusLineTests {
    /// Everything written to a pipe's write end so far, once it is closed.
    func drained(_ pipe: Pipe) -> String {
        try? pipe.fileHandleForWriting.close()
        return String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    }

    @Test("Given a status line drawn, when a log line is written above it, then the line is cleared, the log line written, and the status line drawn again")
    func logLineGoesAbove() {
        let terminal = Pipe()
        let line = TerminalStatusLine(output: terminal.fileHandleForWriting.fileDescriptor)
        line.draw("\r[##..] 1/2")

        // When
        line.writeAbove(Array("a warning\n".utf8), to: terminal.fileHandleForWriting.fileDescriptor)
        line.end("\n2 albums\n")
        line.writeAbove(Array("after\n".utf8), to: terminal.fileHandleForWriting.fileDescriptor)

        // Then
        #expect(drained(terminal) == "\r[##..] 1/2\r\u{1B}[Ka warning\n\r[##..] 1/2\n2 albums\nafter\n")
    }
}
