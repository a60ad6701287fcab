@testable import CoverdControl
import CoverdModel
import CoverdSync
import Testing

@Suite("The control protocol: line-delimited JSON, bounded, strict")
struct ControlProtocolTests {
    private func line(_ text: String) -> [UInt8] { Array(text.utf8) }

    private func decodeEncoded(_ request: ControlRequest) throws -> ControlRequest {
        let bytes = ControlProtocol.encode(request)
        #expect(bytes.last == 0x0A && bytes.dropLast().firstIndex(of: 0x0A) == nil)
        return try ControlProtocol.decodeRequest(Array(bytes.dropLast()))
    }

    @Test("Given each request, when encoded and decoded, then it is the same, on one line")
    func requestsRoundTrip() throws {
        let requests: [ControlRequest] = [
            .follow,
            .refresh(RefreshRequest(ids: [AlbumID(trusted: "a.b_c-1"), AlbumID(trusted: "two")], all: false, mark: .revalidate)),
            .refresh(RefreshRequest(ids: [], all: true, mark: .erase)),
        ]
        for request in requests {
            #expect(try decodeEncoded(request) == request)
        }
    }

    @Test("Given each response, when encoded and decoded, then it is the same, on one line, even with quotes and newlines in its text")
    func responsesRoundTrip() throws {
        let summary = SyncSummary(albums: 5, cached: 2, pending: 2, failed: 1, awaitingLookup: 1, outdated: 1)
        let responses: [ControlResponse] = [
            .refreshed(count: 3), .unknown([AlbumID(trusted: "x"), AlbumID(trusted: "y")]), .stopping,
            .error("bad \"request\"\nsecond line"), .progress(FollowUpdate(summary: summary, note: "reloading")),
        ]
        for response in responses {
            let bytes = ControlProtocol.encode(response)
            #expect(bytes.last == 0x0A && bytes.dropLast().firstIndex(of: 0x0A) == nil)
            #expect(try ControlProtocol.decodeResponse(Array(bytes.dropLast())) == response)
        }
    }

    @Test("Given a summary with lookups waiting, outdated covers and a note, when made a follow line, then it begins with the STATUS= summary and says each")
    func followLine() {
        let update = FollowUpdate(summary: SyncSummary(albums: 4, cached: 2, pending: 1, failed: 1, awaitingLookup: 1, outdated: 2), note: "reloading")
        #expect(update.line == "4 albums: 2 cached, 1 pending, 1 failed; 1 waiting for a lookup; 2 outdated; reloading")
        #expect(FollowUpdate(summary: SyncSummary(albums: 1, cached: 1), note: nil).line == "1 albums: 1 cached, 0 pending, 0 failed")
    }

    @Test("Given hostile or broken request lines, when decoded, then each is refused with a reason, never a crash", arguments: [
        ("", "not JSON"),
        ("{", "not JSON"),
        ("[\"follow\"]", "must be an object"),
        ("{\"request\": 1}", "not a string"),
        ("{}", "no \"request\""),
        ("{\"request\": \"shutdown\"}", "unknown request"),
        ("{\"request\": \"refresh\"}", "names ids or asks for all"),
        ("{\"request\": \"refresh\", \"ids\": \"one\"}", "not an array"),
        ("{\"request\": \"refresh\", \"ids\": [1]}", "is a number"),
        ("{\"request\": \"refresh\", \"ids\": [\"../etc/passwd\"]}", "not an album id"),
        ("{\"request\": \"refresh\", \"all\": \"yes\"}", "not a boolean"),
        ("{\"request\": \"follow\", \"x\": [[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]}", "not JSON"),
        ("{\"request\": \"follow\"} trailing", "not JSON"),
    ])
    func hostileRequests(text: String, reason: String) {
        #expect {
            try ControlProtocol.decodeRequest(Array(text.utf8))
        } throws: { error in
            (error as? ProtocolError)?.reason.contains(reason) == true
        }
    }

    @Test("Given a request with keys it does not know, when decoded, then they are ignored, so a newer client still works")
    func unknownKeysIgnored() throws {
        #expect(try ControlProtocol.decodeRequest(line("{\"request\": \"follow\", \"since\": 3}")) == .follow)
    }

    @Test("Given a line over the limit, when decoded, then it is refused without being parsed")
    func overlongLine() {
        let long = Array("{\"request\": \"follow\", \"pad\": \"".utf8) + [UInt8](repeating: 0x61, count: ControlProtocol.maxLineBytes) + Array("\"}".utf8)
        #expect(throws: ProtocolError.self) { try ControlProtocol.decodeRequest(long) }
    }

    @Test("Given bytes arriving in pieces, when cut into lines, then each whole line comes out once, CRLF too, and the rest waits")
    func lineBufferCuts() throws {
        var buffer = LineBuffer(limit: 64)
        buffer.append(Array("one\r\ntw".utf8))
        #expect(try buffer.nextLine() == Array("one".utf8))
        #expect(try buffer.nextLine() == nil)
        buffer.append(Array("o\nthree".utf8))
        #expect(try buffer.nextLine() == Array("two".utf8))
        #expect(try buffer.nextLine() == nil)
        #expect(buffer.pendingCount == 5)
    }

    @Test("Given more bytes than the limit without a newline, when cut into lines, then it overflows instead of growing")
    func lineBufferBounded() {
        var buffer = LineBuffer(limit: 8)
        buffer.append(Array("0123456789".utf8))
        #expect(throws: LineBuffer.Overflow.self) { try buffer.nextLine() }
        var ended = LineBuffer(limit: 8)
        ended.append(Array("0123456789\n".utf8))
        #expect(throws: LineBuffer.Overflow.self) { try ended.nextLine() }
    }
}
