import Dispatch
import Synchronization

/// A re-armable one-shot timer whose handler runs on a given queue. It
/// fires only when armed: nothing wakes the process while it is disarmed.
///
/// The dispatch source is kept behind a mutex because Dispatch on Linux
/// does not mark sources Sendable; every use goes through the lock.
package final class QueueTimer: Sendable {
    private let source: Mutex<any DispatchSourceTimer>

    package init(queue: DispatchQueue, handler: @escaping @Sendable () -> Void) {
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.setEventHandler(handler: handler)
        timer.schedule(deadline: .distantFuture)
        timer.resume()
        source = Mutex(timer)
    }

    /// Fires once after `delay`; `nil` disarms.
    package func arm(after delay: Duration?) {
        source.withLock { timer in
            guard let delay else {
                timer.schedule(deadline: .distantFuture)
                return
            }
            let nanoseconds = max(0, delay.components.seconds * 1_000_000_000 + delay.components.attoseconds / 1_000_000_000)
            timer.schedule(deadline: .now() + .nanoseconds(Int(nanoseconds)))
        }
    }

    /// Fires every `interval` until disarmed or cancelled.
    package func repeating(every interval: Duration) {
        source.withLock { timer in
            let nanoseconds = Int(interval.components.seconds * 1_000_000_000 + interval.components.attoseconds / 1_000_000_000)
            timer.schedule(deadline: .now() + .nanoseconds(nanoseconds), repeating: .nanoseconds(nanoseconds))
        }
    }

    package func cancel() {
        source.withLock { $0.cancel() }
    }
}
