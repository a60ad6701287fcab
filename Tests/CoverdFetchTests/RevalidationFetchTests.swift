@testable import CoverdBase
@testable import CoverdFetch
@testable import CoverdModel
import CoverdTestSupport
import Foundation
import Testing

/// Conditional requests against the tests' server, which answers them as RFC 9110 says.
@Suite("Curl fetcher: revalidation", .serialized)
struct RevalidationFetchTests {
    @Test("Given a cover downloaded with its ETag and Last-Modified, when revalidated with them, then the server answers 304 and the fetcher says not modified, holding no body")
    func unchangedCoverIsNotModified() throws {
        let directory = TestDirectory()
        let server = try CoverServer(root: directory.sub("www"))
        try server.serve(PNGFixture.make(width: 10, height: 10, seed: 1), at: "a.png")
        let fetcher = try CurlFetcher(settings: FetchSettings())
        defer { fetcher.shutdown() }
        let outcomes = FetchOutcomes()
        let url = try CoverURL(validating: server.url("a.png"))
        fetcher.fetch(FetchID(1), url: url, completion: outcomes.completion(FetchID(1), consumedBy: fetcher))
        try waitUntil("the download") { outcomes[FetchID(1)] != nil }
        guard case .success(let body)? = outcomes[FetchID(1)] else { Issue.record("\(String(describing: outcomes[FetchID(1)]))"); return }
        #expect(body.validators.etag?.hasPrefix("\"") == true && body.validators.lastModified?.hasSuffix("GMT") == true)

        // When
        fetcher.fetch(FetchID(2), url: url, purpose: .revalidation(body.validators), completion: outcomes.completion(FetchID(2), consumedBy: fetcher))

        // Then
        try waitUntil("the revalidation") { outcomes[FetchID(2)] != nil }
        guard case .notModified(let answer)? = outcomes[FetchID(2)] else { Issue.record("\(String(describing: outcomes[FetchID(2)]))"); return }
        #expect(answer.validators.etag == body.validators.etag)
        #expect(try server.requests().notModified["/a.png"] == 1)
    }

    @Test("Given a cover changed on the server, when revalidated with the old validators, then the new body comes with its new ETag")
    func changedCoverIsDownloaded() throws {
        let directory = TestDirectory()
        let server = try CoverServer(root: directory.sub("www"))
        let fetcher = try CurlFetcher(settings: FetchSettings())
        defer { fetcher.shutdown() }
        let outcomes = FetchOutcomes()
        let new = PNGFixture.make(width: 12, height: 9, seed: 2)
        try server.serve(new, at: "a.png")
        let old = Validators(etag: "\"not-the-current-one\"", lastModified: "Mon, 01 Jan 2001 00:00:00 GMT")

        // When
        fetcher.fetch(FetchID(1), url: try CoverURL(validating: server.url("a.png")), purpose: .revalidation(old),
                      completion: outcomes.completion(FetchID(1), consumedBy: fetcher))

        // Then
        try waitUntil("the revalidation") { outcomes[FetchID(1)] != nil }
        guard case .success(let body)? = outcomes[FetchID(1)] else { Issue.record("\(String(describing: outcomes[FetchID(1)]))"); return }
        #expect(body.bytes == new)
        #expect(body.validators.etag != nil && body.validators.etag != old.etag)
        #expect(try server.requests().conditional["/a.png"] == 1, "the request carried the validators")
    }

    @Test("Given a plain download answered 304 by a broken server, when fetched, then it is a failure, not a cover")
    func notModifiedToAPlainRequestIsAFailure() throws {
        let directory = TestDirectory()
        let server = try CoverServer(root: directory.sub("www"))
        let fetcher = try CurlFetcher(settings: FetchSettings())
        defer { fetcher.shutdown() }
        let outcomes = FetchOutcomes()

        fetcher.fetch(FetchID(1), url: try CoverURL(validating: server.url("fault/status/304")), completion: outcomes.completion(FetchID(1), consumedBy: fetcher))

        try waitUntil("the outcome") { outcomes[FetchID(1)] != nil }
        guard case .failure(let failure)? = outcomes[FetchID(1)] else { Issue.record("\(String(describing: outcomes[FetchID(1)]))"); return }
        #expect(failure.httpStatus == 304)
    }
}

extension RevalidationFetchTests {
    @Test("Given a revalidation with no validators to send, when the server answers 304 anyway, then it is a failure, not a confirmation")
    func notModifiedWithoutValidatorsIsAFailure() throws {
        let directory = TestDirectory()
        let server = try CoverServer(root: directory.sub("www"))
        let fetcher = try CurlFetcher(settings: FetchSettings())
        defer { fetcher.shutdown() }
        let outcomes = FetchOutcomes()

        fetcher.fetch(FetchID(1), url: try CoverURL(validating: server.url("fault/status/304")), purpose: .revalidation(Validators(etag: nil, lastModified: nil)),
                      completion: outcomes.completion(FetchID(1), consumedBy: fetcher))

        try waitUntil("the outcome") { outcomes[FetchID(1)] != nil }
        guard case .failure(let failure)? = outcomes[FetchID(1)] else { Issue.record("\(String(describing: outcomes[FetchID(1)]))"); return }
        #expect(failure.httpStatus == 304)
    }
}

@Suite("HTTP header lines: validators")
struct ValidatorHeaderTests {
    func parse(_ line: String) -> HTTPHeaderLine {
        Array(line.utf8).withUnsafeBytes { HTTPHeaderLine($0) }
    }

    @Test("Given ETag and Last-Modified lines in any case, when parsed, then their values are kept as sent")
    func validatorsAreRead() {
        #expect(parse("ETag: \"abc\"\r\n") == .etag("\"abc\""))
        #expect(parse("etag: W/\"x\"\r\n") == .etag("W/\"x\""))
        #expect(parse("Last-Modified: Wed, 21 Oct 2015 07:28:00 GMT\r\n") == .lastModified("Wed, 21 Oct 2015 07:28:00 GMT"))
    }

    @Test("Given a hostile validator (over 256 bytes, or with control bytes), when parsed, then it is dropped rather than sent back")
    func hostileValidatorsAreDropped() {
        #expect(parse("ETag: \"" + String(repeating: "a", count: 300) + "\"\r\n") == .other)
        #expect(parse("ETag: \"a\u{1}b\"\r\n") == .other)
        #expect(parse("Last-Modified: \u{7F}\r\n") == .other)
    }
}
