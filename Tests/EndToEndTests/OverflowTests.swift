
import CoverdTestSupport
import Foundation
import Testing

@Suite("End to end: inotify overflow", .serialized)
struct OverflowTests {
    @Test("Given 20,000 record files created while the daemon cannot read events, when it resumes, then it notices the overflow, rescans and knows every album")
    func overflowRescans() throws {
        let world = try World()
        let daemon = try world.startDaemon()
        try daemon.waitUntilReady()
        // Stopped, the daemon cannot drain inotify: 40,000 events overflow the kernel's queue.
        daemon.send(SIGSTOP)
        let url = world.server.url("gone.png")
        for index in 0..<20_000 {
            let text = "{\"id\": \"a\(index)\", \"title\": \"T\(index)\", \"artist\": \"A\", \"cover_url\": \"\(url)\"}"
            #expect(FileManager.default.createFile(atPath: world.records + "/r\(index).json", contents: Data(text.utf8)))
        }
        daemon.send(SIGCONT)
        try waitUntil("the overflow noticed", timeout: 60) { daemon.log.contains("the inotify queue overflowed") }
        let snapshot = try daemon.waitForStatus("every album known", timeout: 120, interval: 0.5) { $0.albums == 20_000 && $0.pending == 0 }
        #expect(snapshot.failed == 20_000)
        #expect(try world.server.requestCount("/gone.png") == 1)
        #expect(try daemon.stop() == 0)
    }
}
