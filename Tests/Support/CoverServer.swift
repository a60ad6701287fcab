import Foundation

/// `cover_server.py` running on 127.0.0.1 for one test: serves files from
/// `root`, counts requests, and plays the faults listed in its docstring.
public final class CoverServer: Sendable {
    public let root: String
    public let port: Int
    public let scheme: String
    private let process: Process

    /// Starts the server and waits until it listens. `stallHandshakes`: over TLS, how many
    /// first connections are accepted and never get an answer to their handshake.
    public init(root: String, tlsCertificate: String? = nil, tlsKey: String? = nil, stallHandshakes: Int = 0) throws {
        self.root = root
        scheme = tlsCertificate == nil ? "http" : "https"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        var arguments = ["python3", CoverServer.scriptPath, "--root", root]
        if let tlsCertificate, let tlsKey {
            arguments += ["--tls-cert", tlsCertificate, "--tls-key", tlsKey, "--stall-handshakes", String(stallHandshakes)]
        }
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        self.process = process
        // The first line is "PORT <n>".
        var line: [UInt8] = []
        while true {
            let byte = output.fileHandleForReading.readData(ofLength: 1)
            guard let first = byte.first else { throw TimedOut(what: "cover_server.py to print its port", seconds: 0) }
            if first == 0x0A { break }
            line.append(first)
        }
        guard let port = Int(String(decoding: line, as: UTF8.self).replacingOccurrences(of: "PORT ", with: "")) else {
            throw TimedOut(what: "a port from cover_server.py", seconds: 0)
        }
        self.port = port
    }

    deinit {
        // SIGKILL: a test runner may start children with SIGTERM blocked, and the server keeps no state.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    public static var scriptPath: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("cover_server.py").path
    }

    public func url(_ path: String) -> String {
        "\(scheme)://127.0.0.1:\(port)" + (path.hasPrefix("/") ? path : "/" + path)
    }

    /// Puts a file in the served directory.
    public func serve(_ bytes: [UInt8], at name: String) throws {
        let path = root + "/" + name
        try FileManager.default.createDirectory(
            atPath: URL(fileURLWithPath: path).deletingLastPathComponent().path, withIntermediateDirectories: true)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    /// What the server saw: request counts per path, the most requests it
    /// served at once, and every User-Agent.
    public struct Requests: Sendable {
        public var total: Int
        public var paths: [String: Int]
        public var maxInFlight: Int
        public var inFlight: Int
        public var userAgents: [String]
        /// When each path was requested, in the server's monotonic seconds.
        public var times: [String: [Double]]
        /// Requests per path that carried If-None-Match or If-Modified-Since, and those answered 304.
        public var conditional: [String: Int] = [:]
        public var notModified: [String: Int] = [:]
    }

    public func requests() throws -> Requests {
        let data = try curlGet(url("/__requests"))
        guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any],
            let total = object["total"] as? Int, let paths = object["paths"] as? [String: Int],
            let maxInFlight = object["max_in_flight"] as? Int, let inFlight = object["in_flight"] as? Int,
            let agents = object["user_agents"] as? [String]
        else { throw CocoaError(.fileReadCorruptFile) }
        let times = object["times"] as? [String: [Double]] ?? [:]
        var requests = Requests(total: total, paths: paths, maxInFlight: maxInFlight, inFlight: inFlight, userAgents: agents, times: times)
        requests.conditional = object["conditional"] as? [String: Int] ?? [:]
        requests.notModified = object["not_modified"] as? [String: Int] ?? [:]
        return requests
    }

    public func requestCount(_ path: String) throws -> Int {
        try requests().paths[path] ?? 0
    }

    /// Makes every request for plain file `path` (e.g. "/a.png") answer `status`; 0 serves it again.
    public func fail(_ path: String, status: Int) throws {
        _ = try curlGet(url("/__fail?path=\(path)&status=\(status)"))
    }

    public func resetCounts() throws {
        _ = try curlGet(url("/__reset"))
    }

    /// The control endpoints are read with curl(1), independent of coverd's own libcurl code.
    private func curlGet(_ url: String) throws -> Data {
        Data(try runTool(["curl", "-sS", "--max-time", "10", "-k", url]).stdout.utf8)
    }
}
