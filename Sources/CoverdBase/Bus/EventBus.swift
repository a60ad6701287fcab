import Dispatch
import Synchronization

/// A message that can travel on the `EventBus`.
public protocol BusMessage: Sendable {}

/// An in-process, typed, NotificationCenter-style bus: posters and observers
/// never know each other.
///
/// Threading and ordering: `post` may be called from any thread. Each
/// observer's handler runs on the queue it chose; for a serial queue,
/// messages posted from one thread arrive in the order they were posted.
/// Once an observation is cancelled (or its token released), deliveries not
/// yet started are dropped; a handler already running finishes.
public final class EventBus: Sendable {
    private let registry = Mutex(Registry())

    public init() {}

    /// Delivers `message` to every current observer of its type.
    public func post<Message: BusMessage>(_ message: Message) {
        let targets = registry.withLock { $0.observers[ObjectIdentifier(Message.self)].map { Array($0.values) } ?? [] }
        for observer in targets.sorted(by: { $0.serial < $1.serial }) {
            observer.deliver(message)
        }
    }

    /// Calls `handler` on `queue` for every message of type `Message` posted
    /// until the returned token is cancelled or released.
    public func observe<Message: BusMessage>(
        _ type: Message.Type, on queue: DispatchQueue, handler: @escaping @Sendable (Message) -> Void
    ) -> ObservationToken {
        let key = ObjectIdentifier(Message.self)
        let observer = registry.withLock { registry -> Observer in
            registry.nextSerial += 1
            let observer = Observer(serial: registry.nextSerial, queue: queue) { message in
                if let typed = message as? Message { handler(typed) }
            }
            registry.observers[key, default: [:]][observer.serial] = observer
            return observer
        }
        return ObservationToken { [weak self] in
            observer.deactivate()
            self?.registry.withLock { registry in
                registry.observers[key]?[observer.serial] = nil
                if registry.observers[key]?.isEmpty == true { registry.observers[key] = nil }
            }
        }
    }

    /// How many observers `Message` has; for tests and diagnostics.
    public func observerCount<Message: BusMessage>(of type: Message.Type) -> Int {
        registry.withLock { $0.observers[ObjectIdentifier(Message.self)]?.count ?? 0 }
    }

    private struct Registry {
        var observers: [ObjectIdentifier: [UInt64: Observer]] = [:]
        var nextSerial: UInt64 = 0
    }
}

/// One registration. Its `active` flag is checked on the observer's queue so
/// that a cancelled observation receives nothing more.
private final class Observer: Sendable {
    let serial: UInt64
    let queue: DispatchQueue
    let handler: @Sendable (any BusMessage) -> Void
    private let active = Atomic<Bool>(true)

    init(serial: UInt64, queue: DispatchQueue, handler: @escaping @Sendable (any BusMessage) -> Void) {
        self.serial = serial
        self.queue = queue
        self.handler = handler
    }

    func deliver(_ message: any BusMessage) {
        queue.async {
            guard self.active.load(ordering: .acquiring) else { return }
            self.handler(message)
        }
    }

    func deactivate() {
        active.store(false, ordering: .releasing)
    }
}

/// Keeps an observation alive; cancelling it, or releasing the last
/// reference, unsubscribes.
public final class ObservationToken: Sendable {
    private let cancellation: Mutex<(@Sendable () -> Void)?>

    init(_ cancel: @escaping @Sendable () -> Void) {
        cancellation = Mutex(cancel)
    }

    public func cancel() {
        let action = cancellation.withLock { action -> (@Sendable () -> Void)? in
            defer { action = nil }
            return action
        }
        action?()
    }

    deinit {
        cancel()
    }
}
