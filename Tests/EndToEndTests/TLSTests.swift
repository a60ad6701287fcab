
import CoverdTestSupport
import Foundation
import Testing

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

    @Test("Given ca_file naming a CA other than the one that signed the server, when fetched, then it is refused")
    func wrongCAIsRefused() throws {
        let directory = TestDirectory("coverd-tls")
        let certificates = try TestCertificates(in: directory.path)
        let other = try TestCertificates(in: directory.sub("other"))
        let server = try CoverServer(root: directory.sub("www"), tlsCertificate: certificates.certificate, tlsKey: certificates.key)
        try server.serve(PNGFixture.make(), at: "c.png")
        let records = directory.sub("albums")
        try writeAtomically("{\"title\": \"T\", \"artist\": \"A\", \"cover_url\": \"\(server.url("c.png"))\"}", to: records + "/a.json")
        let config = directory.file("coverd.toml")
        try writeAtomically("[fetch]\nca_file = \"\(other.ca)\"\n", to: config)
        let daemon = try CoverdDaemon(records: records, cache: directory.file("cache"), arguments: ["--config", config])
        let snapshot = try daemon.waitForStatus("failed") { $0.failed == 1 }
        #expect(snapshot.entries[0].error?.hasPrefix("TLS certificate verification failed") == true, "\(snapshot.entries[0].error ?? "")")
        #expect(try daemon.stop() == 0)
    }

    @Test("Given ca_file and covers on two TLS hosts (two connections at least), when coverd sync runs, then every cover is cached and the certificate authorities were read once")
    func authoritiesAreReadOnce() throws {
        // Given
        let directory = TestDirectory("coverd-tls")
        let certificates = try TestCertificates(in: directory.path)
        let hosts = try (0..<2).map { index in
            try CoverServer(root: directory.sub("www\(index)"), tlsCertificate: certificates.certificate, tlsKey: certificates.key)
        }
        let records = directory.sub("albums")
        var albums: [String] = []
        for (index, host) in hosts.enumerated() {
            for cover in 0..<3 {
                try host.serve(PNGFixture.make(seed: index * 10 + cover), at: "c\(cover).png")
                albums.append("{\"title\": \"T\(index)-\(cover)\", \"artist\": \"A\", \"cover_url\": \"\(host.url("c\(cover).png"))\"}")
            }
        }
        try writeAtomically("[" + albums.joined(separator: ",") + "]", to: records + "/a.json")
        let config = directory.file("coverd.toml")
        try writeAtomically("[fetch]\nca_file = \"\(certificates.ca)\"\n", to: config)

        // When
        let (result, opened) = try syncUnderStrace(records: records, cache: directory.file("cache"), arguments: ["--config", config], in: directory)

        // Then: the bundle is one in-memory file (/proc/self/fd/<n>) that libcurl parses once and then shares
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("6 cached"), "\(result.stdout)")
        let authorities = opened.filter { $0.wholeMatch(of: /\/proc\/self\/fd\/[0-9]+/) != nil || $0.hasSuffix(".pem") || $0.hasSuffix(".crt") }
        #expect(authorities.filter { $0.hasPrefix("/proc/self/fd/") }.count == 1, "\(authorities)")
        #expect(authorities.filter { $0 == certificates.ca }.count == 1, "ca_file is read by coverd at start, not by each connection: \(authorities)")
    }

    @Test("Given no ca_file and covers on two TLS hosts, when coverd sync runs, then the system's certificate authorities were read once and the private CA is still refused")
    func systemAuthoritiesAreReadOnce() throws {
        // Given
        let directory = TestDirectory("coverd-tls")
        let certificates = try TestCertificates(in: directory.path)
        let hosts = try (0..<2).map { index in
            try CoverServer(root: directory.sub("www\(index)"), tlsCertificate: certificates.certificate, tlsKey: certificates.key)
        }
        let records = directory.sub("albums")
        var albums: [String] = []
        for (index, host) in hosts.enumerated() {
            try host.serve(PNGFixture.make(seed: index), at: "c.png")
            albums.append("{\"title\": \"T\(index)\", \"artist\": \"A\", \"cover_url\": \"\(host.url("c.png"))\"}")
        }
        try writeAtomically("[" + albums.joined(separator: ",") + "]", to: records + "/a.json")
        let systemBundle = try runTool(["curl-config", "--ca"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        try #require(FileManager.default.isReadableFile(atPath: systemBundle), "libcurl's CA bundle \(systemBundle)")

        // When
        let (result, opened) = try syncUnderStrace(records: records, cache: directory.file("cache"), arguments: [], in: directory)

        // Then
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.components(separatedBy: "TLS certificate verification failed").count == 3, "\(result.stdout)")
        #expect(opened.filter { $0 == systemBundle }.count == 1, "\(opened.filter { $0.hasSuffix(".crt") || $0.hasSuffix(".pem") })")
    }

    /// `coverd sync` under strace(1): its result, and every path it opened, in order.
    func syncUnderStrace(records: String, cache: String, arguments: [String], in directory: TestDirectory) throws -> (CommandResult, [String]) {
        let trace = directory.file("strace.txt")
        // LeakSanitizer refuses to run under ptrace, and would fail the exit status of `make asan-e2e`'s coverd.
        let sanitizer = ProcessInfo.processInfo.environment["ASAN_OPTIONS"].map { $0 + ":" } ?? ""
        let result = try runCommand(
            "/usr/bin/strace", ["-f", "-qq", "-o", trace, "-e", "trace=open,openat", coverdBinary, "sync",
                                "--records", records, "--cache", cache, "--give-up-after", "5"] + arguments,
            environment: ["ASAN_OPTIONS": sanitizer + "detect_leaks=0"])
        let text = String(decoding: readBytes(trace) ?? [], as: UTF8.self)
        // `123 openat(AT_FDCWD, "/path", O_RDONLY) = 7`; a call another thread interrupted ends in `<unfinished ...>`.
        let opened = text.split(separator: "\n").compactMap { line -> String? in
            guard let call = line.firstMatch(of: /open(at)?\((AT_FDCWD, )?"([^"]*)"/) else { return nil }
            return String(call.3)
        }
        return (result, opened)
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
