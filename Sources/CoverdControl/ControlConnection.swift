#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Dispatch
import Synchronization
import CoverdBase

/// One accepted client of the control socket: reads its one request line
/// (bounded, within a deadline), then writes response lines without ever
/// blocking, buffering at most `maxPendingOutput` bytes for a slow reader
/// (one that falls further behind is dropped).
///
/// Threading: every method runs on the server's queue, where its Dispatch
/// sources deliver too; the lock keeps the type honestly `Sendable`.
final class ControlConnection: Sendable {
    private let socket: UnixSocket
    private let queue: DispatchQueue
    private let maxPendingOutput: Int
    private let state: Mutex<State>
    private let onRequest: @Sendable (ControlConnection, ControlRequest) -> Void
    private let onClose: @Sendable (ControlConnection) -> Void

    private struct State {
        var input: LineBuffer
        var output: [UInt8] = []
        var reader: DescriptorSource?
        var writer: DescriptorSource?
        var deadline: QueueTimer?
        var requested = false
        var closeWhenFlushed = false
        var closed = false
    }

    init(
        socket: UnixSocket, queue: DispatchQueue, maxRequestBytes: Int, maxPendingOutput: Int,
        onRequest: @escaping @Sendable (ControlConnection, ControlRequest) -> Void,
        onClose: @escaping @Sendable (ControlConnection) -> Void
    ) {
        self.socket = socket
        self.queue = queue
        self.maxPendingOutput = maxPendingOutput
        self.onRequest = onRequest
        self.onClose = onClose
        state = Mutex(State(input: LineBuffer(limit: maxRequestBytes)))
    }

    /// Starts reading; the request must be whole within `requestTimeout`.
    func start(requestTimeout: Duration) {
        let reader = DescriptorSource(.read, on: socket, queue: queue) { [weak self] in self?.readable() }
        let deadline = QueueTimer(queue: queue) { [weak self] in self?.timedOut(after: requestTimeout) }
        state.withLock { state in
            state.reader = reader
            state.deadline = deadline
        }
        deadline.arm(after: requestTimeout)
        reader.resume()
    }

    /// Queues `response` and writes what the socket takes now.
    func send(_ response: ControlResponse) {
        let overflow = state.withLock { state -> Bool in
            guard !state.closed else { return false }
            state.output += ControlProtocol.encode(response)
            return state.output.count > maxPendingOutput
        }
        if overflow { return close() }  // A follower this far behind is not reading.
        flush()
    }

    /// Sends `response`, then closes once it is written.
    func finish(with response: ControlResponse) {
        state.withLock { $0.closeWhenFlushed = true }
        send(response)
    }

    /// Sends what the socket takes of `response` now, then closes: for a daemon that stops.
    func abandon(with response: ControlResponse) {
        send(response)
        close()
    }

    func close() {
        let (reader, writer, deadline) = state.withLock { state -> (DescriptorSource?, DescriptorSource?, QueueTimer?) in
            guard !state.closed else { return (nil, nil, nil) }
            state.closed = true
            defer { (state.reader, state.writer, state.deadline) = (nil, nil, nil) }
            return (state.reader, state.writer, state.deadline)
        }
        guard let reader else { return }
        deadline?.cancel()
        writer?.cancel()
        reader.cancel()
        onClose(self)
    }

    private func readable() {
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        // At most 64 KiB per wake-up, so one client cannot hold the queue; the source fires again for the rest.
        for _ in 0..<4 {
            let count = chunk.withUnsafeMutableBytes { recv(socket.descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count == 0 { return close() }  // The client left.
            if count < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK { return }
                return close()
            }
            let line: Result<[UInt8]?, LineBuffer.Overflow>? = state.withLock { state in
                // After its request a client has nothing more to say: anything further is dropped unread.
                guard !state.requested else { return nil }
                state.input.append(chunk[..<count])
                do throws(LineBuffer.Overflow) {
                    return .success(try state.input.nextLine())
                } catch {
                    return .failure(error)
                }
            }
            switch line {
            case nil, .success(nil)?:
                continue
            case .failure(let overflow)?:
                return refuse("a request longer than \(overflow.limit) bytes")
            case .success(let bytes?)?:
                return received(bytes)
            }
        }
    }

    private func received(_ line: [UInt8]) {
        let deadline = state.withLock { state -> QueueTimer? in
            state.requested = true
            return state.deadline
        }
        deadline?.arm(after: nil)
        do {
            onRequest(self, try ControlProtocol.decodeRequest(line))
        } catch {
            refuse("bad request: \(error.reason)")
        }
    }

    private func timedOut(after timeout: Duration) {
        guard !state.withLock({ $0.requested }) else { return }
        refuse("no whole request within \(timeout)")
    }

    private func refuse(_ reason: String) {
        state.withLock { $0.requested = true }
        finish(with: .error(reason))
    }

    /// Writes what the socket takes; waits for room with a write source while output remains.
    private func flush() {
        while true {
            let pending = state.withLock { state -> [UInt8]? in state.closed || state.output.isEmpty ? nil : state.output }
            guard let pending else { break }
            switch socket.sendSome(pending[...]) {
            case .success(let count):
                state.withLock { $0.output.removeFirst(count) }
            case .failure(let error) where error.code == EINTR:
                continue
            case .failure(let error) where error.code == EAGAIN || error.code == EWOULDBLOCK:
                return awaitRoom()
            case .failure:
                return close()  // The client is gone (EPIPE, ECONNRESET).
            }
        }
        let (writer, done) = state.withLock { state -> (DescriptorSource?, Bool) in
            defer { state.writer = nil }
            return (state.writer, state.closeWhenFlushed && !state.closed)
        }
        writer?.cancel()
        if done { close() }
    }

    private func awaitRoom() {
        let writer = state.withLock { state -> DescriptorSource? in
            guard state.writer == nil, !state.closed else { return nil }
            let writer = DescriptorSource(.write, on: socket, queue: queue) { [weak self] in self?.flush() }
            state.writer = writer
            return writer
        }
        writer?.resume()
    }
}
