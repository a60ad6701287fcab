import Foundation

/// Runs `coverd <arguments>` on a pseudo-terminal `columns` wide
/// (`run_in_pty.py`): standard output and error are that terminal, and the
/// result's `stdout` is every byte it showed, carriage returns and escape
/// sequences included (each newline as "\r\n", as a terminal does). Killed,
/// with status 124, after `timeout` seconds.
public func runCoverdOnTerminal(_ arguments: [String], columns: Int = 100, timeout: Double = 60) throws -> CommandResult {
    let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("run_in_pty.py").path
    return try runTool(["python3", script, "--columns", "\(columns)", "--timeout", "\(timeout)", "--", coverdBinary] + arguments)
}

/// Runs `coverd <arguments>` to completion like `runCoverd`, but kills it
/// and fails after `timeout` seconds: for commands that end by themselves
/// only when coverd works (`sync`).
public func runCoverd(_ arguments: [String], timeout: Double) throws -> CommandResult {
    try runTool(["timeout", "--signal=KILL", "\(timeout)", coverdBinary] + arguments)
}
