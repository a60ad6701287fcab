import Foundation

/// `musicbrainz_server.py` running on 127.0.0.1 for one test: a stand-in for
/// MusicBrainz, the Cover Art Archive and its image host (three ports),
/// serving the fixtures it was started with and counting every request.
public final class MusicBrainzServer: Sendable {
    public let musicBrainzPort: Int
    public let archivePort: Int
    public let imagesPort: Int
    private let process: Process

    /// Starts the server on `fixtures` (the format in its docstring) and waits until it listens.
    public init(fixtures: [String: Any], in directory: TestDirectory) throws {
        let file = directory.path + "/musicbrainz-fixtures.json"
        try JSONSerialization.data(withJSONObject: fixtures, options: [.sortedKeys]).write(to: URL(fileURLWithPath: file))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", MusicBrainzServer.scriptPath, "--fixtures", file]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        // Three lines, in this order: "PORT mb <n>", "PORT caa <n>", "PORT images <n>".
        let ports: [String: Int]
        do {
            ports = try MusicBrainzServer.readPorts(from: output, of: process, timeout: MusicBrainzServer.startTimeout)
        } catch {
            // Not yet a server: deinit will not run, so stop the script here.
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
            throw error
        }
        guard let mb = ports["mb"], let caa = ports["caa"], let images = ports["images"] else {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
            throw ToolError(message: "musicbrainz_server.py printed ports for \(ports.keys.sorted()), not mb, caa and images")
        }
        self.process = process
        musicBrainzPort = mb
        archivePort = caa
        imagesPort = images
    }

    /// How long the script may take to print its ports.
    private static let startTimeout: Double = 30

    /// Reads "PORT <origin> <n>" lines from the script's standard output until it has three, waiting at
    /// most `timeout` seconds in all (poll(2) on the pipe, so a script that hangs cannot block the test).
    /// Throws `TimedOut` when the time is up, `ToolError` when the script exits first.
    private static func readPorts(from pipe: Pipe, of process: Process, timeout: Double) throws -> [String: Int] {
        let fd = pipe.fileHandleForReading.fileDescriptor
        let deadline = Date().addingTimeInterval(timeout)
        var ports: [String: Int] = [:]
        var line: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 256)
        // The script ended (a bad fixture, a crash: its standard error is in the test's output).
        func exited() -> ToolError {
            let how = process.terminationReason == .uncaughtSignal ? "was killed by signal" : "exited with status"
            return ToolError(
                message: "musicbrainz_server.py \(how) \(process.terminationStatus) before printing its ports"
                    + " (\(ports.count) of 3 printed)")
        }
        while ports.count < 3 {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else {
                if !process.isRunning { throw exited() }
                throw TimedOut(what: "musicbrainz_server.py to print its ports (it was killed)", seconds: timeout)
            }
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, Int32(min(left, 1) * 1000) + 1)
            if ready < 0 {
                if errno == EINTR { continue }
                throw ToolError(message: "poll(2) on musicbrainz_server.py's output failed: errno \(errno)")
            }
            if ready == 0 {
                // Nothing to read: if the script is gone, nothing will come.
                if !process.isRunning { throw exited() }
                continue
            }
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw ToolError(message: "reading musicbrainz_server.py's output failed: errno \(errno)")
            }
            if count == 0 {
                // End of file: the script has exited, or at least closed its standard output.
                try? waitUntil("musicbrainz_server.py to exit", timeout: 5) { !process.isRunning }
                if !process.isRunning { throw exited() }
                throw ToolError(message: "musicbrainz_server.py closed its output before printing its ports")
            }
            for byte in buffer[0..<count] {
                guard byte == 0x0A else {
                    line.append(byte)
                    continue
                }
                let words = String(decoding: line, as: UTF8.self).split(separator: " ")
                if words.count == 3, words[0] == "PORT", let port = Int(words[2]) { ports[String(words[1])] = port }
                line = []
            }
        }
        return ports
    }

    deinit {
        // SIGKILL: a test runner may start children with SIGTERM blocked, and the server keeps no state.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    public static var scriptPath: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("musicbrainz_server.py").path
    }

    public var musicBrainzURL: String { "http://127.0.0.1:\(musicBrainzPort)" }
    public var archiveURL: String { "http://127.0.0.1:\(archivePort)" }

    /// A `[sources]` section pointing coverd at this server.
    public func sourcesSection(minScore: Int? = nil, contact: String = "coverd-tests@example.org") -> String {
        var text = "[sources]\nmusicbrainz_url = \"\(musicBrainzURL)\"\ncoverartarchive_url = \"\(archiveURL)\"\ncontact = \"\(contact)\"\n"
        if let minScore { text += "min_score = \(minScore)\n" }
        return text
    }

    /// What the server saw.
    public struct Requests: Sendable {
        /// Every request, all origins.
        public var total: Int
        /// Requests per origin ("mb", "caa", "images").
        public var byOrigin: [String: Int]
        /// Requests per path (without the query), all origins.
        public var paths: [String: Int]
        /// MusicBrainz requests answered 503 because they came too soon after the previous two.
        public var overRate: Int
        /// The most MusicBrainz requests accepted within any one second.
        public var maxAcceptedInWindow: Int
        public var userAgents: [String]
        /// When each MusicBrainz request the rate rule let through arrived (the server's monotonic
        /// seconds, ascending), however it was answered: normally or with a hostile mode.
        public var acceptedTimes: [Double]
        /// The accepted MusicBrainz requests answered with a hostile mode (the same values as in
        /// `acceptedTimes`); a hostile spec whose `times` are used up adds none.
        public var hostileTimes: [Double]
        /// The MusicBrainz requests the rate rule answered 503.
        public var overRateTimes: [Double]
    }

    public func requests() throws -> Requests {
        let data = Data(try runTool(["curl", "-sS", "--max-time", "10", "\(musicBrainzURL)/__requests"]).stdout.utf8)
        guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any],
            let total = object["total"] as? Int, let paths = object["paths"] as? [String: Int],
            let origins = object["origins"] as? [String: [String: Any]], let mb = object["mb"] as? [String: Any],
            let overRate = mb["over_rate"] as? Int, let maxAccepted = mb["max_accepted_in_window"] as? Int,
            let agents = object["user_agents"] as? [String]
        else { throw CocoaError(.fileReadCorruptFile) }
        return Requests(
            total: total, byOrigin: origins.compactMapValues { $0["total"] as? Int }, paths: paths, overRate: overRate,
            maxAcceptedInWindow: maxAccepted, userAgents: agents, acceptedTimes: mb["accepted_times"] as? [Double] ?? [],
            hostileTimes: mb["hostile_times"] as? [Double] ?? [], overRateTimes: mb["over_rate_times"] as? [Double] ?? [])
    }

    /// Replaces the stand-in's fixtures (POST /__fixtures), as the services change their data.
    public func replaceFixtures(_ fixtures: [String: Any]) throws {
        let body = String(decoding: try JSONSerialization.data(withJSONObject: fixtures), as: UTF8.self)
        let result = try runTool(["curl", "-sS", "--fail", "--max-time", "10", "-X", "POST", "--data-binary", body, "\(musicBrainzURL)/__fixtures"])
        guard result.status == 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: result.stderr]) }
    }
}
