import Dispatch
import Foundation
import Synchronization

/// Turns SIGTERM, SIGINT and SIGHUP into calls on a queue. The signals'
/// default actions are disabled first, so they are only ever handled here.
final class SignalWatcher: Sendable {
    private let sources: Mutex<[any DispatchSourceSignal]> = Mutex([])
    private let queue = DispatchQueue(label: "coverd.signals")

    func on(_ signals: [Int32], _ handler: @escaping @Sendable (Int32) -> Void) {
        for number in signals {
            signal(number, SIG_IGN)
            sources.withLock { sources in
                let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
                source.setEventHandler { handler(number) }
                source.resume()
                sources.append(source)
            }
        }
    }

    func cancel() {
        sources.withLock { sources in
            sources.forEach { $0.cancel() }
            sources = []
        }
    }
}
