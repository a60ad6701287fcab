import Foundation

/// A certificate authority and a server certificate for 127.0.0.1, made with openssl(1) for one test.
public struct TestCertificates: Sendable {
    public let ca: String
    public let certificate: String
    public let key: String

    /// - Parameter names: the certificate's subjectAltName entries.
    public init(in directory: String, names: String = "IP:127.0.0.1, DNS:localhost") throws {
        ca = directory + "/ca.pem"
        certificate = directory + "/server.pem"
        key = directory + "/server.key"
        let caKey = directory + "/ca.key"
        let request = directory + "/server.csr"
        let extensions = directory + "/san.ext"
        try writeAtomically("subjectAltName = \(names)\nbasicConstraints = CA:FALSE\n", to: extensions)
        try Self.openssl(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", caKey, "-out", ca, "-days", "2",
                          "-subj", "/CN=coverd test CA"])
        try Self.openssl(["req", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", request, "-subj", "/CN=127.0.0.1"])
        try Self.openssl(["x509", "-req", "-in", request, "-CA", ca, "-CAkey", caKey, "-CAcreateserial", "-out", certificate,
                          "-days", "2", "-extfile", extensions])
    }

    public static func openssl(_ arguments: [String]) throws {
        let result = try runTool(["openssl"] + arguments)
        guard result.status == 0 else { throw ToolError(message: "openssl \(arguments.first ?? ""): \(result.stderr)") }
    }
}
