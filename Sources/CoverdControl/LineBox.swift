import Synchronization

/// A `LineBuffer` behind a lock, so that the client that reads into it stays
/// `Sendable`; only one thread ever uses a client at a time.
final class LineBox: Sendable {
    private let buffer: Mutex<LineBuffer>

    init(_ buffer: LineBuffer) {
        self.buffer = Mutex(buffer)
    }

    func append(_ chunk: ArraySlice<UInt8>) {
        buffer.withLock { $0.append(chunk) }
    }

    func next() throws(LineBuffer.Overflow) -> [UInt8]? {
        try buffer.withLock { buffer throws(LineBuffer.Overflow) in try buffer.nextLine() }
    }
}
