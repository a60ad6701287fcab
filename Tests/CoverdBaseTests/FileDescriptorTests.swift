@testable import CoverdBase
import CLinux
import CoverdTestSupport
import Foundation
import Synchronization
import Testing

/// The descriptor helpers the commands and the cache share: whole writes and pipe buffers.
@Suite("File descriptors")
struct FileDescriptorTests {
    /// A new pipe's buffer and twice that, when the system allows a pipe that large
    /// (not on a kernel whose pipes already start at pipe-max-size, as with 64 KiB pages).
    static let growth: (from: Int32, to: Int32)? = {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { return nil }
        defer { ends.forEach { close($0) } }
        let size = coverd_pipe_size(ends[1])
        let limit = Int32(pipeMaxSize ?? 0)
        return size > 0 && size * 2 <= limit ? (size, size * 2) : nil
    }()

    func makePipe() throws -> (read: Int32, write: Int32) {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        return (ends[0], ends[1])
    }

    @Test("Given a pipe, when its buffer is enlarged, then the kernel reports the larger size",
          .enabled(if: FileDescriptorTests.growth != nil, "this system cannot grow a new pipe's buffer"))
    func pipeBufferGrows() throws {
        // Given
        let (from, to) = try #require(Self.growth)
        let (reading, writing) = try makePipe()
        defer { close(reading); close(writing) }
        #expect(coverd_pipe_size(writing) == from)

        // When
        let size = enlargePipeBuffer(writing, to: to)

        // Then
        #expect(size == Int(to))
        #expect(coverd_pipe_size(reading) == to)
    }

    @Test("Given a pipe, when asked for a buffer smaller than it has, then it keeps its size")
    func pipeBufferNeverShrinks() throws {
        // Given
        let (reading, writing) = try makePipe()
        defer { close(reading); close(writing) }
        let size = coverd_pipe_size(writing)
        try #require(size >= 8192)

        // When
        let result = enlargePipeBuffer(writing, to: size / 2)

        // Then
        #expect(result == nil)
        #expect(coverd_pipe_size(writing) == size)
    }

    /// Coverage for `writeAll` itself: partial writes into a pipe whose reader is slower.
    @Test("Given more bytes than a pipe holds, when written whole while a reader drains it, then every byte arrives in order")
    func writeAllCrossesManyPipeBuffers() throws {
        // Given
        let (reading, writing) = try makePipe()
        let bytes = (0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let received = ReceivedBytes()
        let reader = Thread {
            var all: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = chunk.withUnsafeMutableBytes { read(reading, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { break }
                all += chunk[..<count]
            }
            close(reading)
            received.bytes.withLock { $0 = all }
        }
        reader.start()

        // When
        let failure = bytes.withUnsafeBytes { writeAll($0, to: writing) }
        close(writing)

        // Then
        #expect(failure == nil)
        try waitUntil("the reader saw the end of the pipe") { received.bytes.withLock { $0 != nil } }
        let all = received.bytes.withLock { $0 } ?? []
        #expect(all.count == bytes.count)
        let firstDifference = zip(all, bytes).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        #expect(firstDifference == nil)
    }
}

/// What the reader thread received, handed to the test.
private final class ReceivedBytes: Sendable {
    let bytes = Mutex<[UInt8]?>(nil)
}
