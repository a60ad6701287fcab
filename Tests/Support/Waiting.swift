import Foundation

/// A condition that did not become true before its deadline.
public struct TimedOut: Error, CustomStringConvertible {
    public var what: String
    public var seconds: Double
    public var description: String { "timed out after \(seconds) s waiting for \(what)" }
}

/// Re-checks `condition` every few milliseconds until it holds, failing after
/// `timeout`. Tests wait on conditions like this, never on bare sleeps.
public func waitUntil(
    _ what: String, timeout: Double = 20, interval: Double = 0.02, _ condition: () throws -> Bool
) throws {
    let deadline = Date().addingTimeInterval(timeout)
    while true {
        if try condition() { return }
        if Date() >= deadline { throw TimedOut(what: what, seconds: timeout) }
        Thread.sleep(forTimeInterval: interval)
    }
}

/// Like `waitUntil`, returning the first non-nil value.
public func waitFor<T>(_ what: String, timeout: Double = 20, interval: Double = 0.02, _ produce: () throws -> T?) throws -> T {
    var result: T?
    try waitUntil(what, timeout: timeout, interval: interval) {
        result = try produce()
        return result != nil
    }
    guard let result else { throw TimedOut(what: what, seconds: timeout) }
    return result
}
