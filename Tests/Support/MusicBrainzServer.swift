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
        self.process = process
        // Three lines, in this order: "PORT mb <n>", "PORT caa <n>", "PORT images <n>".
        var ports: [String: Int] = [:]
        var line: [UInt8] = []
        while ports.count < 3 {
            let byte = output.fileHandleForReading.readData(ofLength: 1)
            guard let first = byte.first else { throw TimedOut(what: "musicbrainz_server.py to print its ports", seconds: 0) }
            guard first == 0x0A else {
                line.append(first)
                continue
            }
            let words = String(decoding: line, as: UTF8.self).split(separator: " ")
            if words.count == 3, words[0] == "PORT", let port = Int(words[2]) { ports[String(words[1])] = port }
            line = []
        }
        guard let mb = ports["mb"], let caa = ports["caa"], let images = ports["images"] else {
            throw TimedOut(what: "three ports from musicbrainz_server.py", seconds: 0)
        }
        musicBrainzPort = mb
        archivePort = caa
        imagesPort = images
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
            maxAcceptedInWindow: maxAccepted, userAgents: agents)
    }
}
