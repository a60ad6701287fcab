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

/// Whether `condition` came to hold within `deadline`, re-checked every few
/// milliseconds. For async tests: it sleeps between looks, so the tasks it
/// waits for have the cooperative threads (a blocking wait could starve them).
public func eventually(within deadline: Duration = .seconds(20), _ condition: () async -> Bool) async -> Bool {
    let end = ContinuousClock.now.advanced(by: deadline)
    while ContinuousClock.now < end {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(2))
    }
    return await condition()
}

/// Runs a blocking call on a thread of its own and awaits it: calls that wait
/// for tasks must not block a cooperative thread those tasks may need.
public func blocking(_ call: @escaping @Sendable () -> Void) async {
    await withCheckedContinuation { continuation in
        Thread {
            call()
            continuation.resume()
        }.start()
    }
}
