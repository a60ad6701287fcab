import Foundation

/// nginx serving `root` over TLS on 127.0.0.1 for one test, with HTTP/2 or
/// HTTP/1.1 only, each request logged with the number of the connection it
/// came on: a real multiplexing server, which `cover_server.py` is not.
public final class NginxServer: Sendable {
    public let port: Int
    private let process: Process
    private let accessLog: String

    /// One process (no master, no daemon), so killing it leaves nothing behind.
    public init(root: String, certificates: TestCertificates, http2: Bool, in directory: String) throws {
        let prefix = directory + "/nginx-\(http2 ? "h2" : "h1")"
        try FileManager.default.createDirectory(atPath: prefix + "/logs", withIntermediateDirectories: true)
        accessLog = prefix + "/logs/access.log"
        port = try Self.freePort()
        // nginx 1.25.1 replaced `listen … http2` with the `http2` directive.
        let listen = "listen 127.0.0.1:\(port) ssl\(http2 && !Self.hasHTTP2Directive ? " http2" : "");"
            + (http2 && Self.hasHTTP2Directive ? "\n        http2 on;" : "")
        let config = """
            daemon off;
            master_process off;
            worker_processes 1;
            pid \(prefix)/nginx.pid;
            error_log \(prefix)/logs/error.log warn;
            events { worker_connections 256; }
            http {
                log_format connections '$connection $server_protocol $status $request_uri';
                access_log \(accessLog) connections;
                keepalive_requests 100000;
                types { image/png png; }
                client_body_temp_path \(prefix)/body;
                proxy_temp_path \(prefix)/proxy;
                fastcgi_temp_path \(prefix)/fastcgi;
                uwsgi_temp_path \(prefix)/uwsgi;
                scgi_temp_path \(prefix)/scgi;
                server {
                    \(listen)
                    ssl_certificate \(certificates.certificate);
                    ssl_certificate_key \(certificates.key);
                    ssl_protocols TLSv1.2 TLSv1.3;
                    root \(root);
                }
            }

            """
        try writeAtomically(config, to: prefix + "/nginx.conf")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.executable)
        process.arguments = ["-e", prefix + "/logs/error.log", "-p", prefix, "-c", prefix + "/nginx.conf"]
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        let port = self.port
        try waitUntil("nginx to listen on \(port)") { Self.accepts(port) || !process.isRunning }
        guard process.isRunning else { throw ToolError(message: "nginx exited: \(String(decoding: readBytes(prefix + "/logs/error.log") ?? [], as: UTF8.self))") }
    }

    deinit {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    public func url(_ path: String) -> String { "https://127.0.0.1:\(port)/" + path }

    /// One logged request: the connection it came on, its protocol ("HTTP/2.0"), status and path.
    public struct Request: Sendable, Equatable {
        public var connection: String
        public var protocolName: String
        public var status: Int
        public var path: String
    }

    /// Every request logged so far (nginx writes each line when its response ends).
    public func requests() -> [Request] {
        String(decoding: readBytes(accessLog) ?? [], as: UTF8.self).split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ").map(String.init)
            guard fields.count == 4, let status = Int(fields[2]) else { return nil }
            return Request(connection: fields[0], protocolName: fields[1], status: status, path: fields[3])
        }
    }

    public static var executable: String {
        ["/usr/sbin/nginx", "/usr/bin/nginx"].first { FileManager.default.isExecutableFile(atPath: $0) } ?? "/usr/sbin/nginx"
    }

    private static let hasHTTP2Directive: Bool = {
        // "nginx version: nginx/1.22.1", on stderr.
        let text = (try? runCommand(executable, ["-v"]).stderr) ?? ""
        let numbers = text.split(separator: "/").last.map { $0.split(separator: ".").compactMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) } } ?? []
        return numbers.count == 3 && !numbers.lexicographicallyPrecedes([1, 25, 1])
    }()

    private static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw ToolError(message: "no free port: errno \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    private static func accepts(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}
