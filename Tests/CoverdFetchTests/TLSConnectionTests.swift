@testable import CoverdBase
@testable import CoverdFetch
@testable import CoverdModel
import CoverdTestSupport
import Foundation
import Testing

/// How the fetcher's transfers share TLS connections: one HTTP/2 connection
/// for a host that multiplexes, parallel connections for one that does not,
/// and no host held up by one of its covers that never answers.
@Suite("TLS connections", .serialized)
struct TLSConnectionTests {
    /// `count` covers of different sizes under `root`, by fetch id.
    func covers(_ count: Int, in root: String) throws -> [FetchID: [UInt8]] {
        var expected: [FetchID: [UInt8]] = [:]
        for index in 0..<count {
            let png = PNGFixture.make(width: 16 + index, height: 16, seed: index + 1)
            try writeAtomically(png, to: root + "/c\(index).png")
            expected[FetchID(UInt64(index))] = png
        }
        return expected
    }

    /// Fetch settings that trust the test CA, with room for `parallel` covers at once to one host.
    func settings(trusting certificates: TestCertificates, parallel: Int? = nil) -> FetchSettings {
        var settings = FetchSettings()
        settings.caFile = certificates.ca
        if let parallel {
            settings.concurrency = parallel
            settings.perHost = parallel
        }
        return settings
    }

    func expectArrived(_ expected: [FetchID: [UInt8]], in outcomes: FetchOutcomes) {
        for (id, bytes) in expected {
            guard case .success(let body)? = outcomes[id] else {
                Issue.record("\(id): \(String(describing: outcomes[id]))")
                continue
            }
            #expect(body.bytes == bytes, "\(id)")
        }
    }

    @Test("Given an HTTP/2 host over TLS and 24 covers asked for at once, when fetched, then all arrive as streams of one connection")
    func http2HostGetsOneConnection() throws {
        // Given: nginx with HTTP/2, and room for every cover at once
        let directory = TestDirectory("coverd-h2")
        let certificates = try TestCertificates(in: directory.path)
        let expected = try covers(24, in: directory.sub("www"))
        let nginx = try NginxServer(root: directory.sub("www"), certificates: certificates, http2: true, in: directory.path)
        let fetcher = try CurlFetcher(settings: settings(trusting: certificates, parallel: 24))
        defer { fetcher.shutdown() }
        let outcomes = FetchOutcomes()

        // When
        for index in 0..<24 {
            let id = FetchID(UInt64(index))
            fetcher.fetch(id, url: try CoverURL(validating: nginx.url("c\(index).png")), completion: outcomes.completion(id, consumedBy: fetcher))
        }

        // Then
        try waitUntil("all 24 outcomes") { outcomes.all.count == 24 }
        expectArrived(expected, in: outcomes)
        try waitUntil("nginx to log 24 requests") { nginx.requests().count == 24 }
        let requests = nginx.requests()
        #expect(Set(requests.map(\.connection)).count == 1, "connections: \(Set(requests.map(\.connection)).sorted())")
        #expect(requests.allSatisfy { $0.protocolName == "HTTP/2.0" && $0.status == 200 }, "\(requests)")
    }

    @Test("Given no ca_file and libcurl's CA bundle file missing, when a cover is fetched over TLS, then the handshake is judged against the CA directory (the test CA is not in it: a certificate failure), not refused for the missing file")
    func missingSystemBundleUsesTheDirectory() throws {
        // Given: a bundle path that does not exist (where libcurl's own does exist, it would serve as well;
        // what this catches is the missing file named, which fails every handshake)
        let directory = TestDirectory("coverd-nobundle")
        let certificates = try TestCertificates(in: directory.path)
        let server = try CoverServer(root: directory.sub("www"), tlsCertificate: certificates.certificate, tlsKey: certificates.key)
        _ = try covers(1, in: server.root)
        let fetcher = try CurlFetcher(
            settings: FetchSettings(), userAgent: nil, longestWait: CurlSocketDriver.defaultLongestWait,
            systemBundle: directory.file("ca-certificates.crt"))
        defer { fetcher.shutdown() }
        let outcomes = FetchOutcomes()

        // When
        fetcher.fetch(FetchID(0), url: try CoverURL(validating: server.url("c0.png"))) { outcomes.record(FetchID(0), $0) }

        // Then
        try waitUntil("the fetch's end") { outcomes.all.count == 1 }
        guard case .failure(let failure)? = outcomes[FetchID(0)] else {
            Issue.record("expected a certificate failure, got \(String(describing: outcomes[FetchID(0)]))")
            return
        }
        #expect(fetcher.notes.count == 1, "\(fetcher.notes)")
        #expect(failure.message.contains("certificate verification failed"), "\(failure.message)")
    }

    @Test("Given an HTTP/1.1 host over TLS that answers only once 4 requests are in flight together, when 4 covers are fetched at once, then each arrives: parallel connections")
    func http11HostGetsParallelConnections() throws {
        // Given: each request is held until 4 are in flight, which over HTTP/1.1 takes 4 connections
        let directory = TestDirectory("coverd-h1")
        let certificates = try TestCertificates(in: directory.path)
        let server = try CoverServer(root: directory.sub("www"), tlsCertificate: certificates.certificate, tlsKey: certificates.key)
        let expected = try covers(4, in: server.root)
        let fetcher = try CurlFetcher(settings: settings(trusting: certificates, parallel: 4))
        defer { fetcher.shutdown() }
        let outcomes = FetchOutcomes()

        // When
        for index in 0..<4 {
            let id = FetchID(UInt64(index))
            fetcher.fetch(id, url: try CoverURL(validating: server.url("fault/barrier/4/c\(index).png")), completion: outcomes.completion(id, consumedBy: fetcher))
        }

        // Then: one connection would leave the barrier unmet, and the server answers 503 after 30 s
        try waitUntil("all 4 outcomes", timeout: 60) { outcomes.all.count == 4 }
        expectArrived(expected, in: outcomes)
        #expect(try server.requests().maxInFlight == 4)
    }

    @Test("Given a TLS host with a cover that never answers, when more of its covers are fetched with it or after it, then they arrive while it still waits", arguments: [false, true])
    func silentCoverDoesNotHoldUpItsHost(afterItsRequest: Bool) throws {
        // Given: no low-speed limit, so the silent transfer lasts the whole test
        let directory = TestDirectory("coverd-tls-silent")
        let certificates = try TestCertificates(in: directory.path)
        let server = try CoverServer(root: directory.sub("www"), tlsCertificate: certificates.certificate, tlsKey: certificates.key)
        let expected = try covers(3, in: server.root).reduce(into: [:]) { $0[FetchID($1.key.rawValue + 1)] = $1.value }
        var settings = self.settings(trusting: certificates)
        settings.lowSpeedLimit = 0
        let fetcher = try CurlFetcher(settings: settings)
        defer { fetcher.shutdown() }
        let outcomes = FetchOutcomes()
        let silent = FetchID(0)
        fetcher.fetch(silent, url: try CoverURL(validating: server.url("fault/silent")), completion: outcomes.completion(silent, consumedBy: fetcher))
        if afterItsRequest { try waitUntil("the silent request to arrive") { try server.requests().inFlight == 1 } }

        // When
        for index in 0..<3 {
            let id = FetchID(UInt64(index + 1))
            fetcher.fetch(id, url: try CoverURL(validating: server.url("c\(index).png")), completion: outcomes.completion(id, consumedBy: fetcher))
        }

        // Then
        try waitUntil("the three covers") { expected.keys.allSatisfy { outcomes[$0] != nil } }
        expectArrived(expected, in: outcomes)
        #expect(outcomes[silent] == nil, "the silent cover still waits for its answer")
    }

    @Test("Given a TLS host whose first connection never gets an answer to its handshake, when three covers are fetched at once, then the other two arrive once that connection gives up at connect_timeout")
    func stalledHandshakeHoldsUpToConnectTimeout() throws {
        // Given
        let directory = TestDirectory("coverd-tls-stall")
        let certificates = try TestCertificates(in: directory.path)
        let server = try CoverServer(
            root: directory.sub("www"), tlsCertificate: certificates.certificate, tlsKey: certificates.key, stallHandshakes: 1)
        let expected = try covers(3, in: server.root)
        var settings = self.settings(trusting: certificates)
        settings.connectTimeout = .seconds(1)
        let fetcher = try CurlFetcher(settings: settings)
        defer { fetcher.shutdown() }
        let outcomes = FetchOutcomes()

        // When
        for index in 0..<3 {
            let id = FetchID(UInt64(index))
            fetcher.fetch(id, url: try CoverURL(validating: server.url("c\(index).png")), completion: outcomes.completion(id, consumedBy: fetcher))
        }

        // Then: the first cover's connection times out; the others waited for it (PIPEWAIT), then went their own way
        try waitUntil("all 3 outcomes") { outcomes.all.count == 3 }
        guard case .failure(let failure)? = outcomes[FetchID(0)] else {
            Issue.record("expected the stalled cover to time out, got \(String(describing: outcomes[FetchID(0)]))")
            return
        }
        #expect(failure.kind == .timeout, "\(failure.message)")
        expectArrived(expected.filter { $0.key != FetchID(0) }, in: outcomes)
    }

    @Test("Given a TLS host that never answers a handshake, when four covers are fetched at once, then each fails as a timeout: none waits for ever behind another")
    func deadHostFailsEveryCover() throws {
        // Given
        let directory = TestDirectory("coverd-tls-dead")
        let certificates = try TestCertificates(in: directory.path)
        let server = try CoverServer(
            root: directory.sub("www"), tlsCertificate: certificates.certificate, tlsKey: certificates.key, stallHandshakes: 1000)
        _ = try covers(4, in: server.root)
        var settings = self.settings(trusting: certificates)
        settings.connectTimeout = .seconds(1)
        let fetcher = try CurlFetcher(settings: settings)
        defer { fetcher.shutdown() }
        let outcomes = FetchOutcomes()

        // When
        for index in 0..<4 {
            let id = FetchID(UInt64(index))
            fetcher.fetch(id, url: try CoverURL(validating: server.url("c\(index).png")), completion: outcomes.completion(id, consumedBy: fetcher))
        }

        // Then: with PIPEWAIT they fail one after another, each after its own connect_timeout
        try waitUntil("all 4 outcomes", timeout: 40) { outcomes.all.count == 4 }
        for index in 0..<4 {
            guard case .failure(let failure)? = outcomes[FetchID(UInt64(index))] else {
                Issue.record("\(index): expected a timeout, got \(String(describing: outcomes[FetchID(UInt64(index))]))")
                continue
            }
            #expect(failure.kind == .timeout, "\(index): \(failure.message)")
        }
    }
}
