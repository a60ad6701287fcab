import Foundation

/// A `coverd` command that keeps running (`status --follow`), its output in
/// files that tests read as it grows, and its exit status once it ends.
public final class CoverdStream: Sendable {
    public let outPath: String
    public let errPath: String
    private let process: Process

    /// Runs `executable` (the built `coverd`, or `setpriv` to run it as another user) with `arguments`.
    public init(_ arguments: [String], executable: String = coverdBinary, environment: [String: String] = [:], files prefix: String) throws {
        outPath = prefix + ".out"
        errPath = prefix + ".err"
        for path in [outPath, errPath] {
            guard FileManager.default.createFile(atPath: path, contents: nil) else { throw CocoaError(.fileWriteUnknown) }
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardOutput = FileHandle(forWritingAtPath: outPath)
        process.standardError = FileHandle(forWritingAtPath: errPath)
        try process.run()
        self.process = process
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    public var lines: [String] {
        ((try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    public var stderr: String { (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "" }

    /// The exit status once the process has ended; nil while it runs.
    public var exitStatus: Int32? { process.isRunning ? nil : process.terminationStatus }

    public func send(_ signal: Int32) {
        kill(process.processIdentifier, signal)
    }

    /// Waits for the process to end by itself and returns its exit status.
    public func waitForExit(timeout: Double = 15) throws -> Int32 {
        try waitFor("the command to exit", timeout: timeout) { exitStatus }
    }
}
