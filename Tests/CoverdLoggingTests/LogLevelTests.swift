import CoverdLogging
import Logging
import Testing

@Suite("Log levels")
struct LogLevelTests {
    @Test("Given two loggers on one shared level, when one logger's level is set, then only that logger changes, and a change of the shared level (a reload) reaches the other")
    func settingOneLoggersLevelLeavesTheOthers() {
        // Given
        let shared = LogLevelSetting(.info)
        var quiet = Logger(label: "quiet") { _ in StderrLogHandler(level: shared) }
        let other = Logger(label: "other") { _ in StderrLogHandler(level: shared) }

        // When
        quiet.logLevel = .error

        // Then
        #expect(quiet.logLevel == .error)
        #expect(other.logLevel == .info)
        #expect(shared.current == .info)
        shared.current = .debug
        #expect(other.logLevel == .debug)
        #expect(quiet.logLevel == .error)
    }
}
