
import CoverdTestSupport
import Foundation
import Testing

/// A certificate authority and a server certificate for 127.0.0.1, made with openssl(1) for one test.
struct TestCertificates {
    let ca: String
    let certificate: String
    let key: String

    /// - Parameter names: the certificate's subjectAltName entries.
    init(in directory: String, names: String = "IP:127.0.0.1, DNS:localhost") throws {
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

    static func openssl(_ arguments: [String]) throws {
        let result = try runTool(["openssl"] + arguments)
        guard result.status == 0 else { throw ToolError(message: "openssl \(arguments.first ?? ""): \(result.stderr)") }
    }
}

@Suite("End to end: TLS", .serialized)
struct TLSTests {
    @Test("Given an HTTPS server signed by a private CA, when fetched by default, then it fails with a certificate error")
    func untrustedCertificateIsRefused() throws {
        let directory = TestDirectory("coverd-tls")
        let certificates = try TestCertificates(in: directory.path)
        let server = try CoverServer(root: directory.sub("www"), tlsCertificate: certificates.certificate, tlsKey: certificates.key)
        try server.serve(PNGFixture.make(), at: "c.png")
        let records = directory.sub("albums")
        try writeAtomically("{\"title\": \"T\", \"artist\": \"A\", \"cover_url\": \"\(server.url("c.png"))\"}", to: records + "/a.json")
        let daemon = try CoverdDaemon(records: records, cache: directory.file("cache"))
        let snapshot = try daemon.waitForStatus("failed") { $0.failed == 1 }
        #expect(snapshot.entries[0].error?.hasPrefix("TLS certificate verification failed") == true, "\(snapshot.entries[0].error ?? "")")
        #expect(try daemon.stop() == 0)
    }

    @Test("Given ca_file naming the private CA, when fetched, then the cover is cached")
    func trustedWithCAFile() throws {
        let directory = TestDirectory("coverd-tls")
        let certificates = try TestCertificates(in: directory.path)
        let server = try CoverServer(root: directory.sub("www"), tlsCertificate: certificates.certificate, tlsKey: certificates.key)
        let png = PNGFixture.make(seed: 4)
        try server.serve(png, at: "c.png")
        let records = directory.sub("albums")
        try writeAtomically("{\"title\": \"T\", \"artist\": \"A\", \"cover_url\": \"\(server.url("c.png"))\"}", to: records + "/a.json")
        let config = directory.file("coverd.toml")
        try writeAtomically("[fetch]\nca_file = \"\(certificates.ca)\"\n", to: config)
        let daemon = try CoverdDaemon(records: records, cache: directory.file("cache"), arguments: ["--config", config])
        let snapshot = try daemon.waitForStatus("cached") { $0.cached == 1 }
        #expect(readBytes(directory.file("cache") + "/covers/\(snapshot.entries[0].id).png") == png)
        #expect(try daemon.stop() == 0)
    }

    @Test("Given a trusted CA but a certificate for another host name, when fetched, then it is refused")
    func hostNameIsChecked() throws {
        let directory = TestDirectory("coverd-tls")
        let certificates = try TestCertificates(in: directory.path, names: "DNS:other.example")
        let server = try CoverServer(root: directory.sub("www"), tlsCertificate: certificates.certificate, tlsKey: certificates.key)
        try server.serve(PNGFixture.make(), at: "c.png")
        let records = directory.sub("albums")
        try writeAtomically("{\"title\": \"T\", \"artist\": \"A\", \"cover_url\": \"\(server.url("c.png"))\"}", to: records + "/a.json")
        let config = directory.file("coverd.toml")
        try writeAtomically("[fetch]\nca_file = \"\(certificates.ca)\"\n", to: config)
        let daemon = try CoverdDaemon(records: records, cache: directory.file("cache"), arguments: ["--config", config])
        let snapshot = try daemon.waitForStatus("failed") { $0.failed == 1 }
        let error = snapshot.entries[0].error ?? ""
        #expect(error.hasPrefix("TLS certificate verification failed") && error.contains("127.0.0.1"), "\(error)")
        #expect(try daemon.stop() == 0)
    }

    @Test("Given a setting that tries to turn verification off, when checked, then it is refused", arguments: [
        "[fetch]\nverify = false\n", "[fetch]\ninsecure = true\n", "[fetch]\nssl_verify_peer = 0\n", "tls_verify = false\n",
    ])
    func verificationCannotBeDisabled(text: String) throws {
        let directory = TestDirectory()
        let config = directory.file("coverd.toml")
        try writeAtomically(text, to: config)
        let result = try runCoverd(["check-config", "--config", config])
        #expect(result.status == 78)
        #expect(result.stderr.contains("unknown setting"))
    }
}
