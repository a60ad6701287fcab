@testable import CoverdImages
import CoverdTestSupport
import Testing

/// Images inflated whole in memory only while the shared room allows: the
/// memory of every check at once stays bounded, and a check without room
/// streams through zlib and decides the same.
@Suite("Inflate memory")
struct InflateMemoryTests {
    /// A 100×50 RGB image's rows (filter byte 0 each) as one zlib stream of stored blocks.
    private let info = PNGInfo(width: 100, height: 50, bitDepth: 8, colorType: 2, interlaced: false)
    private var rows: [UInt8] { (0..<50).flatMap { y in [0] + (0..<300).map { UInt8(truncatingIfNeeded: $0 &+ y) } } }

    @Test("Given room for an image's rows, when its data is checked, then it is inflated in memory and the room is given back")
    func inMemoryWithRoom() throws {
        // Given
        let memory = InflateMemory(limit: 1 << 20)
        let stream = PNGFixture.zlibStoredForTests(rows)

        // When
        let path = try stream.withUnsafeBytes { try PNGImageData.check([$0], info: info, memory: memory) }

        // Then
        #expect(path == .inMemory)
        #expect(memory.inUse == 0)
    }

    @Test("Given the room taken by other checks, when an image's data is checked, then it is streamed instead, passes whole and is refused cut")
    func streamedWithoutRoom() throws {
        // Given: all but 1 KiB taken, less than the image's 15,050 bytes of rows
        let memory = InflateMemory(limit: 1 << 20)
        let taken = memory.take((1 << 20) - 1_024)
        let stream = PNGFixture.zlibStoredForTests(rows)
        let cut = Array(stream.dropLast(400))

        // When
        let path = try stream.withUnsafeBytes { try PNGImageData.check([$0], info: info, memory: memory) }

        // Then
        #expect(taken)
        #expect(path == .streamed)
        #expect(throws: PNGValidationError.self) {
            try cut.withUnsafeBytes { try PNGImageData.check([$0], info: info, memory: memory) }
        }
        #expect(memory.inUse == (1 << 20) - 1_024, "a streamed check takes nothing")
    }

    @Test("Given a stream split over IDAT chunks, when checked, then the room it asks for counts the rows and the copy that joins the chunks")
    func splitStreamCountsItsCopy() throws {
        // Given: the stream in 1,000-byte pieces; rooms one byte short of rows + stream, and exactly that
        let stream = PNGFixture.zlibStoredForTests(rows)
        let pieces = stride(from: 0, to: stream.count, by: 1_000).map { Array(stream[$0..<min($0 + 1_000, stream.count)]) }
        let needed = rows.count + stream.count
        let short = InflateMemory(limit: needed - 1)
        let enough = InflateMemory(limit: needed)

        // When
        let paths = try [short, enough].map { memory in try Self.check(pieces, info: info, memory: memory) }

        // Then
        #expect(paths == [.streamed, .inMemory])
    }

    @Test("Given room, when taken past the limit, then nothing is taken; given back, it is free again")
    func takeAndGive() {
        let memory = InflateMemory(limit: 100)

        let first = memory.take(60)
        let second = memory.take(50)
        memory.give(60)
        let third = memory.take(100)

        #expect(first)
        #expect(!second)
        #expect(third)
        #expect(memory.inUse == 100)
    }

    /// Checks `pieces` as consecutive IDAT payloads.
    private static func check(_ pieces: [[UInt8]], info: PNGInfo, memory: InflateMemory) throws -> PNGImageData.Path {
        let buffers = pieces.map { piece -> UnsafeMutableRawBufferPointer in
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: piece.count, alignment: 1)
            buffer.copyBytes(from: piece)
            return buffer
        }
        defer { buffers.forEach { $0.deallocate() } }
        return try PNGImageData.check(buffers.map { UnsafeRawBufferPointer($0) }, info: info, memory: memory)
    }
}
