import CCurl
import Foundation
import CoverdModel

/// One download in flight: its easy handle, the body so far, and what the
/// response headers said. Lives on the transfer thread only; libcurl's
/// callbacks reach it through an unretained pointer while the loop's table
/// of active transfers keeps it alive.
final class Transfer {
    let id: FetchID
    let url: CoverURL
    let completion: @Sendable (FetchOutcome) -> Void
    let easy: CurlEasy
    let maxBytes: Int
    let started = ContinuousClock.now
    /// libcurl writes a human-readable reason here when a transfer fails.
    let errorBuffer: UnsafeMutablePointer<CChar>

    private(set) var body: [UInt8] = []
    private(set) var exceededLimit = false
    private(set) var abandonedErrorBody = false
    private var discarded = 0
    /// The final response's Content-Length, allocated whole when its body starts.
    private var announcedLength: Int?
    /// Bytes of body the budget has granted (`mayTake`): the announced length once the body starts.
    private var counted = 0
    /// An error page longer than this is abandoned (the status is all coverd needs).
    static let errorBodyLimit = 64 * 1024
    private(set) var status = 0
    private(set) var reason = ""
    private(set) var retryAfter: String?
    /// The final response's validators (an earlier response's are forgotten at its status line).
    private(set) var validators = Validators(etag: nil, lastModified: nil)
    /// The request's extra headers (a revalidation's), alive as long as libcurl may read them.
    var headers: CurlHeaderList?

    /// What a revalidation sends back; nil for a plain download.
    let revalidating: Validators?
    /// Asked before body bytes are kept: false pauses the transfer (the loop's `BodyBudget`); nil for an answer, never paused.
    var mayTake: ((Int) -> Bool)?

    init(
        id: FetchID, url: CoverURL, easy: CurlEasy, maxBytes: Int, revalidating: Validators? = nil,
        completion: @escaping @Sendable (FetchOutcome) -> Void
    ) {
        self.id = id
        self.url = url
        self.revalidating = revalidating
        self.easy = easy
        self.maxBytes = maxBytes
        self.completion = completion
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE))
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
    }

    deinit {
        errorBuffer.deallocate()
    }

    var errorText: String { String(cString: errorBuffer) }

    /// Takes the body out without copying it, unless it arrived well short of
    /// the length announced (and allocated): then a copy of its size, so the
    /// memory held until it is consumed is what the body budget counts.
    func takeBody() -> [UInt8] {
        defer { body = [] }
        return body.count < body.capacity / 2 ? body.withUnsafeBufferPointer { Array($0) } : body
    }

    /// Body bytes. Returning fewer than offered makes libcurl abort with
    /// CURLE_WRITE_ERROR: the size cap holds even without a Content-Length.
    fileprivate func receive(_ data: UnsafeRawBufferPointer) -> Int {
        guard (200...299).contains(status) else {
            // An error page is read and dropped, up to a limit, so the connection can be reused.
            discarded += data.count
            if discarded > Transfer.errorBodyLimit {
                abandonedErrorBody = true
                return 0
            }
            return data.count
        }
        guard body.count + data.count <= maxBytes else {
            exceededLimit = true
            return 0
        }
        // The whole announced body is allocated at its first bytes, so that is what the budget is asked for.
        let needed = max(announcedLength ?? 0, body.count + data.count)
        if needed > counted {
            // libcurl keeps these bytes and offers them again once the loop resumes the transfer.
            if let mayTake, !mayTake(needed - counted) { return Int(CURL_WRITEFUNC_PAUSE) }
            if body.isEmpty, let announcedLength { body.reserveCapacity(announcedLength) }
            counted = needed
        }
        body.append(contentsOf: data)
        return data.count
    }

    /// One header line. A status line starts a new response (after a redirect
    /// or a 100 Continue), so what earlier responses said is forgotten.
    fileprivate func header(_ line: UnsafeRawBufferPointer) -> Bool {
        switch HTTPHeaderLine(line) {
        case .status(let code, let text):
            announcedLength = nil
            status = code
            reason = text
            retryAfter = nil
            validators = Validators(etag: nil, lastModified: nil)
        case .retryAfter(let value):
            retryAfter = value
        case .etag(let value):
            validators.etag = value
        case .lastModified(let value):
            validators.lastModified = value
        case .contentLength(let length?) where (200...299).contains(status):
            if length > maxBytes {
                exceededLimit = true
                return false
            }
            announcedLength = length
        case .contentLength, .other:
            break
        }
        return true
    }

    var unmanagedPointer: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    static func from(_ pointer: UnsafeMutableRawPointer) -> Transfer {
        Unmanaged<Transfer>.fromOpaque(pointer).takeUnretainedValue()
    }
}

/// libcurl's write callback: hands the bytes to the transfer in `userdata`.
let transferWriteCallback: curl_write_callback = { data, size, count, userdata in
    guard let userdata, let data else { return 0 }
    return Transfer.from(userdata).receive(UnsafeRawBufferPointer(start: data, count: size * count))
}

/// libcurl's header callback; returning 0 aborts (an announced body over the cap).
let transferHeaderCallback: curl_write_callback = { data, size, count, userdata in
    guard let userdata, let data else { return 0 }
    let accepted = Transfer.from(userdata).header(UnsafeRawBufferPointer(start: data, count: size * count))
    return accepted ? size * count : 0
}
