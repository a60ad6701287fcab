@testable import CoverdCore
import Testing

@Suite("Fetch gate")
struct FetchGateTests {
    func url(_ n: Int) throws -> CoverURL { try CoverURL(validating: "http://h/\(n).png") }

    @Test("Given a backlog of bodies at the high-water mark, when fetches are asked for, then they wait and start in order as the backlog drains")
    func backpressure() throws {
        var gate = FetchGate(highWater: 4)
        for _ in 0..<4 { gate.prepareStarted() }
        for n in 1...5 {
            let admitted = gate.admit(FetchID(UInt64(n)), url: try url(n))
            #expect(!admitted)
        }
        let first = gate.prepareFinished()  // 3 pending: above the low-water mark of 2
        #expect(first.isEmpty)
        let released = gate.prepareFinished()  // 2 pending: room for 2 more
        #expect(released.map(\.id.rawValue) == [1, 2])
        #expect(gate.deferredCount == 3)
    }

    @Test("Given a deferred fetch, when it is cancelled, then it never starts and the fetcher is not asked")
    func cancellingDeferred() throws {
        var gate = FetchGate(highWater: 1)
        gate.prepareStarted()
        let first = gate.admit(FetchID(1), url: try url(1))
        let second = gate.admit(FetchID(2), url: try url(2))
        #expect(!first && !second)
        let cancelled = gate.cancel(FetchID(1))
        let unknown = gate.cancel(FetchID(9))
        #expect(cancelled && !unknown)
        let released = gate.prepareFinished()
        #expect(released.map(\.id.rawValue) == [2])
    }

    @Test("Given no backlog, when a fetch is asked for, then it starts at once")
    func openGate() throws {
        var gate = FetchGate(highWater: 2)
        let first = gate.admit(FetchID(1), url: try url(1))
        gate.prepareStarted()
        let second = gate.admit(FetchID(2), url: try url(2))
        #expect(first && second)
    }
}
