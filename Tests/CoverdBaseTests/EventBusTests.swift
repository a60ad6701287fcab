import CoverdBase
import CoverdTestSupport
import Dispatch
import Synchronization
import Testing

private struct Ping: BusMessage { var number: Int }
private struct Pong: BusMessage { var text: String }

/// Collects delivered values across threads.
private final class Inbox<Value: Sendable>: Sendable {
    private let values = Mutex<[Value]>([])
    func add(_ value: Value) { values.withLock { $0.append(value) } }
    var all: [Value] { values.withLock { $0 } }
}

@Suite("Event bus")
struct EventBusTests {
    @Test("Given an observer on a serial queue, when 1,000 messages are posted from one thread, then they arrive in order")
    func ordering() throws {
        let bus = EventBus()
        let received = Inbox<Int>()
        let token = bus.observe(Ping.self, on: DispatchQueue(label: "test")) { received.add($0.number) }
        for number in 0..<1000 { bus.post(Ping(number: number)) }
        try waitUntil("1,000 deliveries") { received.all.count == 1000 }
        #expect(received.all == Array(0..<1000))
        token.cancel()
    }

    @Test("Given observers of two types, when one type is posted, then only its observers get it")
    func typed() throws {
        let bus = EventBus()
        let pings = Inbox<Int>()
        let pongs = Inbox<String>()
        let queue = DispatchQueue(label: "test")
        let tokens = [
            bus.observe(Ping.self, on: queue) { pings.add($0.number) },
            bus.observe(Pong.self, on: queue) { pongs.add($0.text) },
        ]
        bus.post(Pong(text: "hello"))
        queue.sync {}
        #expect(pongs.all == ["hello"])
        #expect(pings.all.isEmpty)
        _ = tokens
    }

    @Test("Given an observer, when delivered, then the handler runs on the queue it chose")
    func deliveryQueue() throws {
        let bus = EventBus()
        let queue = DispatchQueue(label: "chosen")
        let key = DispatchSpecificKey<String>()
        queue.setSpecific(key: key, value: "chosen")
        let seen = Inbox<String?>()
        let token = bus.observe(Ping.self, on: queue) { _ in seen.add(DispatchQueue.getSpecific(key: key)) }
        bus.post(Ping(number: 1))
        try waitUntil("delivery") { !seen.all.isEmpty }
        #expect(seen.all == ["chosen"])
        token.cancel()
    }

    @Test("Given a released token, when a message is posted, then the observer gets nothing and is unregistered")
    func tokenRelease() throws {
        let bus = EventBus()
        let received = Inbox<Int>()
        let queue = DispatchQueue(label: "test")
        var token: ObservationToken? = bus.observe(Ping.self, on: queue) { received.add($0.number) }
        #expect(bus.observerCount(of: Ping.self) == 1)
        _ = token
        token = nil
        #expect(bus.observerCount(of: Ping.self) == 0)
        bus.post(Ping(number: 1))
        queue.sync {}
        #expect(received.all.isEmpty)
    }

    @Test("Given deliveries already queued, when the observation is cancelled on its queue, then they are dropped")
    func cancelDropsQueued() throws {
        let bus = EventBus()
        let received = Inbox<Int>()
        let queue = DispatchQueue(label: "test")
        let gate = DispatchSemaphore(value: 0)
        queue.async { gate.wait() }  // Hold the queue so deliveries pile up behind it.
        let token = bus.observe(Ping.self, on: queue) { received.add($0.number) }
        for number in 0..<10 { bus.post(Ping(number: number)) }
        token.cancel()
        gate.signal()
        queue.sync {}
        #expect(received.all.isEmpty)
    }

    @Test("Given posts from many threads, when delivered, then every message arrives exactly once")
    func concurrentPosts() throws {
        let bus = EventBus()
        let received = Inbox<Int>()
        let token = bus.observe(Ping.self, on: DispatchQueue(label: "test")) { received.add($0.number) }
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for index in 0..<250 { bus.post(Ping(number: thread * 1000 + index)) }
        }
        try waitUntil("2,000 deliveries") { received.all.count == 2000 }
        #expect(Set(received.all).count == 2000)
        token.cancel()
    }
}
