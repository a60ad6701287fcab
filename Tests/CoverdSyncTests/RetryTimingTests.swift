import CoverdBase
import CoverdFetch
import CoverdSync
import Foundation
import Testing

@Suite("Backoff and Retry-After")
struct RetryTimingTests {
    let backoff = Backoff(policy: RetryPolicy())

    @Test("Given successive attempts, when delayed, then the delay starts near 1 s and doubles")
    func doubling() {
        #expect(backoff.delay(attempt: 1, unit: 0.5) == .seconds(1))
        #expect(backoff.delay(attempt: 2, unit: 0.5) == .seconds(2))
        #expect(backoff.delay(attempt: 5, unit: 0.5) == .seconds(16))
    }

    @Test("Given the jitter's extremes, when delayed, then the delay stays within ±25 %")
    func jitter() {
        #expect(backoff.delay(attempt: 3, unit: 0) == .seconds(3))
        #expect(backoff.delay(attempt: 3, unit: 0.999_999) == .milliseconds(5000))
    }

    @Test("Given many attempts, when delayed, then the delay is capped at one hour")
    func cap() {
        #expect(backoff.delay(attempt: 13, unit: 0.999) == .seconds(3600))
        #expect(backoff.delay(attempt: 1000, unit: 0.5) == .seconds(3600))
    }

    @Test("Given Retry-After in seconds, when parsed, then that delay is returned")
    func seconds() {
        let now = Date()
        #expect(RetryAfter.delay(from: "120", now: now) == .seconds(120))
        #expect(RetryAfter.delay(from: " 0 ", now: now) == .zero)
        #expect(RetryAfter.delay(from: "-5", now: now) == nil)
        #expect(RetryAfter.delay(from: "soon", now: now) == nil)
    }

    @Test("Given Retry-After as an HTTP date in each of the three formats, when parsed, then the delay is measured from now",
          arguments: ["Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994"])
    func httpDate(text: String) {
        let date = RetryAfter.httpDate(text)
        #expect(date == Date(timeIntervalSince1970: 784_111_777))
        let now = Date(timeIntervalSince1970: 784_111_777 - 90)
        #expect(RetryAfter.delay(from: text, now: now) == .seconds(90))
    }

    @Test("Given an HTTP date in the past, when parsed, then the delay is zero")
    func pastDate() {
        #expect(RetryAfter.delay(from: "Sun, 06 Nov 1994 08:49:37 GMT", now: Date()) == .zero)
    }

    @Test("Given malformed dates, when parsed, then they are not dates", arguments: ["Sun, 32 Nov 1994 08:49:37 GMT", "Sun, 06 Foo 1994 08:49:37 GMT", "Sun, 06 Nov 1994 25:49:37 GMT", "06 Nov 1994"])
    func malformedDates(text: String) {
        #expect(RetryAfter.httpDate(text) == nil)
    }
}
