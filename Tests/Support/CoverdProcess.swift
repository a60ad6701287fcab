import Foundation
import Synchronization

/// Where the built `coverd` is: $COVERD_BIN, or next to the test bundle.
public var coverdBinary: String {
    if let path = ProcessInfo.processInfo.environment["COVERD_BIN"], !path.isEmpty { return path }
    let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    for candidate in [bundle, bundle.deletingLastPathComponent()] {
        let path = candidate.appendingPathComponent("coverd").path
        if FileManager.default.isExecutableFile(atPath: path) { return path }
    }
    return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent(".build/debug/coverd").path
}

/// A tool that failed, or wrote something the tests cannot read.
public struct ToolError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { message }
    public init(message: String) { self.message = message }
}

/// The result of one `coverd` command.
public struct CommandResult: Sendable {
    public var status: Int32
    public var stdout: String
    public var stderr: String
}

/// Runs `coverd <arguments>` to completion.
public func runCoverd(_ arguments: [String], environment: [String: String] = [:]) throws -> CommandResult {
    try runCommand(coverdBinary, arguments, environment: environment)
}

/// Runs a program found on PATH (`/usr/bin/env <arguments>`) to completion: the tests' tools.
public func runTool(_ arguments: [String]) throws -> CommandResult {
    try runCommand("/usr/bin/env", arguments)
}

/// Runs `executable` to completion, collecting both output streams.
public func runCommand(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws -> CommandResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    // Read both pipes concurrently so a chatty command cannot block on a full pipe.
    let errData = DataBox()
    let reader = Thread { errData.set(err.fileHandleForReading.readDataToEndOfFile()) }
    reader.start()
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    try waitUntil("stderr of \(executable) \(arguments.first ?? "") to close", timeout: 30) { errData.get() != nil }
    return CommandResult(
        status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
        stderr: String(decoding: errData.get() ?? Data(), as: UTF8.self))
}

/// A value handed from one thread to another.
final class DataBox: Sendable {
    private let data = Mutex<Data?>(nil)
    func set(_ new: Data) { data.withLock { $0 = new } }
    func get() -> Data? { data.withLock { $0 } }
}

/// One album in `coverd status --json`.
public struct StatusAlbum: Sendable, Equatable {
    public var id: String
    public var title: String
    public var artist: String
    public var coverURL: String
    public var state: String
    public var path: String?
    public var error: String?
    public var record: String
    /// How the cover's URL was found (`url`, `release`, `release-group`, `search`); nil until known.
    public var source: String? = nil
    public var mbid: String? = nil
    public var releaseGroupMBID: String? = nil
    /// The URL the cached cover was downloaded from; nil until cached.
    public var resolvedURL: String? = nil
    /// Contract §8: whether the cached cover is outdated, and when it was last confirmed (ISO 8601).
    public var outdated: Bool? = nil
    public var checkedAt: String? = nil
}

/// `coverd status --json`, decoded; `keys` holds each album object's key set for format checks.
public struct StatusSnapshot: Sendable {
    public var albums: Int
    public var cached: Int
    public var pending: Int
    public var failed: Int
    /// `summary.outdated` (contract §8); -1 when absent.
    public var outdated: Int
    public var entries: [StatusAlbum]
    public var keys: [Set<String>]

    public func album(_ id: String) -> StatusAlbum? { entries.first { $0.id == id } }

    public init(json: String) throws {
        guard let root = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any],
            let summary = root["summary"] as? [String: Any], let list = root["albums"] as? [[String: Any]]
        else { throw CocoaError(.coderReadCorrupt) }
        albums = summary["albums"] as? Int ?? -1
        cached = summary["cached"] as? Int ?? -1
        pending = summary["pending"] as? Int ?? -1
        failed = summary["failed"] as? Int ?? -1
        outdated = summary["outdated"] as? Int ?? -1
        keys = list.map { Set($0.keys) }
        entries = list.map { item in
            StatusAlbum(
                id: item["id"] as? String ?? "", title: item["title"] as? String ?? "",
                artist: item["artist"] as? String ?? "", coverURL: item["cover_url"] as? String ?? "",
                state: item["state"] as? String ?? "", path: item["path"] as? String,
                error: item["error"] as? String, record: item["record"] as? String ?? "",
                source: item["source"] as? String, mbid: item["mbid"] as? String,
                releaseGroupMBID: item["release_group_mbid"] as? String, resolvedURL: item["resolved_url"] as? String,
                outdated: item["outdated"] as? Bool, checkedAt: item["checked_at"] as? String)
        }
    }
}

/// `coverd status --json --cache <cache>`.
public func status(cache: String) throws -> StatusSnapshot {
    let result = try runCoverd(["status", "--json", "--cache", cache])
    guard result.status == 0 else { throw CocoaError(.executableLoad, userInfo: [NSLocalizedDescriptionKey: result.stderr]) }
    return try StatusSnapshot(json: result.stdout)
}

/// `coverd run` as a separate process on test directories, with its stderr in a file.
public final class CoverdDaemon: Sendable {
    public let records: String
    public let cache: String
    public let logPath: String
    private let process: Process

    public init(records: String, cache: String, arguments: [String] = [], environment: [String: String] = [:]) throws {
        self.records = records
        self.cache = cache
        logPath = cache + ".log"
        guard FileManager.default.createFile(atPath: logPath, contents: nil) else { throw CocoaError(.fileWriteUnknown) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: coverdBinary)
        process.arguments = ["run", "--records", records, "--cache", cache, "--log-level", "debug"] + arguments
        var env = ProcessInfo.processInfo.environment
        env["NOTIFY_SOCKET"] = nil
        env["JOURNAL_STREAM"] = nil
        process.environment = env.merging(environment) { $1 }
        process.standardError = FileHandle(forWritingAtPath: logPath)
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        self.process = process
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    public var pid: Int32 { process.processIdentifier }
    public var isRunning: Bool { process.isRunning }
    /// The exit status once the process has ended on its own; nil while it runs.
    public var exitStatus: Int32? { process.isRunning ? nil : process.terminationStatus }
    public var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    public func status() throws -> StatusSnapshot { try CoverdTestSupport.status(cache: cache) }

    /// Waits until `status` satisfies `condition`.
    @discardableResult
    public func waitForStatus(
        _ what: String, timeout: Double = 30, interval: Double = 0.05, _ condition: (StatusSnapshot) -> Bool
    ) throws -> StatusSnapshot {
        try waitFor(what, timeout: timeout, interval: interval) {
            let snapshot = try status()
            return condition(snapshot) ? snapshot : nil
        }
    }

    /// Waits until the first scan is done and the watch is armed (the `ready` log line).
    public func waitUntilReady(timeout: Double = 30) throws {
        try waitUntil("coverd to log ready", timeout: timeout) { log.contains("event=ready") }
    }

    /// Sends `signal` and waits for the exit status.
    public func stop(signal: Int32 = SIGTERM, timeout: Double = 15) throws -> Int32 {
        kill(process.processIdentifier, signal)
        try waitUntil("coverd to exit after signal \(signal)", timeout: timeout) { !process.isRunning }
        if process.terminationStatus != 0 {
            // Most callers expect 0: when a run fails that way, the reason is in the log (a sanitizer's report too).
            FileHandle.standardError.write(Data("coverd exited with \(process.terminationStatus); its log ends:\n\(log.suffix(4000))\n".utf8))
        }
        return process.terminationStatus
    }

    public func send(_ signal: Int32) {
        kill(process.processIdentifier, signal)
    }
}
