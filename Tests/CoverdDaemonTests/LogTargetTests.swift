import CoverdConfig
import CoverdDaemon
import Testing

@Suite("Log target")
struct LogTargetTests {
    @Test("Given JOURNAL_STREAM for another stream, when the target is auto, then stderr is used")
    func autoTarget() {
        #expect(LogTarget.auto.resolved(environment: [:]) == .stderr)
        #expect(LogTarget.auto.resolved(environment: ["JOURNAL_STREAM": "1:1"]) == .stderr)
        #expect(LogTarget.journal.resolved(environment: [:]) == .journal)
    }
}
