import Dispatch
import Synchronization

/// A Dispatch read or write source on a socket, its handler on a given
/// queue. Kept behind a lock as `QueueTimer` keeps its timer: Dispatch on
/// Linux does not mark sources `Sendable`. The socket stays open until the
/// source's cancellation is done.
final class DescriptorSource: Sendable {
    enum Kind: Sendable {
        case read, write
    }

    // One of the two is set; each keeps the type Dispatch made, as `QueueTimer` does.
    private let reader: Mutex<(any DispatchSourceRead)?>
    private let writer: Mutex<(any DispatchSourceWrite)?>

    init(_ kind: Kind, on socket: UnixSocket, queue: DispatchQueue, handler: @escaping @Sendable () -> Void) {
        switch kind {
        case .read:
            let made = DispatchSource.makeReadSource(fileDescriptor: socket.descriptor, queue: queue)
            made.setEventHandler(handler: handler)
            made.setCancelHandler { withExtendedLifetime(socket) {} }
            reader = Mutex(made)
            writer = Mutex(nil)
        case .write:
            let made = DispatchSource.makeWriteSource(fileDescriptor: socket.descriptor, queue: queue)
            made.setEventHandler(handler: handler)
            made.setCancelHandler { withExtendedLifetime(socket) {} }
            writer = Mutex(made)
            reader = Mutex(nil)
        }
    }

    func resume() {
        reader.withLock { $0?.resume() }
        writer.withLock { $0?.resume() }
    }

    func suspend() {
        reader.withLock { $0?.suspend() }
        writer.withLock { $0?.suspend() }
    }

    func cancel() {
        reader.withLock { $0?.cancel() }
        writer.withLock { $0?.cancel() }
    }
}
