@testable import CoverdFetch
import Testing

@Suite("Admission of transfers")
struct AdmissionQueueTests {
    @Test("Given more work than the limits, when admitted, then neither the total nor the per-host limit is exceeded")
    func limits() {
        var queue = AdmissionQueue<Int>(concurrency: 4, perHost: 2)
        for item in 0..<10 { queue.enqueue(item, origin: item < 6 ? "a" : "b") }
        var admitted: [(Int, String)] = []
        while let next = queue.next() { admitted.append((next.item, next.origin)) }
        #expect(admitted.count == 4)
        #expect(admitted.filter { $0.1 == "a" }.count == 2)
        #expect(admitted.filter { $0.1 == "b" }.count == 2)
        #expect(queue.waitingCount == 6)
    }

    @Test("Given a finished transfer, when admitting, then its slot goes to the next item of a host with room, in FIFO order per host")
    func fifoPerHost() {
        var queue = AdmissionQueue<Int>(concurrency: 1, perHost: 1)
        for item in 0..<3 { queue.enqueue(item, origin: "a") }
        var order: [Int] = []
        while let next = queue.next() {
            order.append(next.item)
            queue.finished(origin: next.origin)
        }
        #expect(order == [0, 1, 2])
    }

    @Test("Given one host saturated, when another host has work, then the other host is not starved")
    func noStarvation() {
        var queue = AdmissionQueue<String>(concurrency: 10, perHost: 1)
        for index in 0..<100 { queue.enqueue("slow-\(index)", origin: "slow") }
        queue.enqueue("fast", origin: "fast")
        let first = queue.next()
        let second = queue.next()
        let items = [first?.item, second?.item]
        #expect(items.contains("fast"))
    }

    @Test("Given thousands of items for one host, when drained, then every item comes out once")
    func compaction() {
        var queue = AdmissionQueue<Int>(concurrency: 1, perHost: 1)
        for item in 0..<5000 { queue.enqueue(item, origin: "a") }
        var seen: [Int] = []
        while let next = queue.next() {
            seen.append(next.item)
            queue.finished(origin: next.origin)
        }
        #expect(seen == Array(0..<5000))
        #expect(queue.activeCount == 0)
    }

    @Test("Given waiting items, when removed by predicate, then they are returned and never admitted")
    func removal() {
        var queue = AdmissionQueue<Int>(concurrency: 8, perHost: 8)
        for item in 0..<6 { queue.enqueue(item, origin: item % 2 == 0 ? "a" : "b") }
        let removed = queue.removeWaiting { $0 % 3 == 0 }
        #expect(removed.sorted() == [0, 3])
        var admitted: [Int] = []
        while let next = queue.next() { admitted.append(next.item) }
        #expect(admitted.sorted() == [1, 2, 4, 5])
    }
}
