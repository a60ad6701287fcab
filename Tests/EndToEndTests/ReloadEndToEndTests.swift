import CoverdTestSupport
import Foundation
import Testing

@Suite("End to end: reload")
struct ReloadEndToEndTests {
    @Test("Given a record over the size limit, when the limit is raised in the configuration and the daemon reloaded, then that reload's rescan reads it with the new limit")
    func reloadHandsEachPartItsSettings() throws {
        // Given
        let world = try World()
        try world.cover("a.png", seed: 1)
        let config = world.directory.path + "/coverd.toml"
        try writeAtomically("[limits]\nmax_record_bytes = 1024\n", to: config)
        try world.record("big.json", world.album("Big", world.server.url("a.png")) + String(repeating: " ", count: 2000))
        let daemon = try world.startDaemon(["--config", config])
        try daemon.waitUntilReady()
        try waitUntil("the record refused for its size") { daemon.log.contains("file is too large") }
        #expect(try daemon.status().albums == 0)

        // When
        try writeAtomically("[limits]\nmax_record_bytes = 1048576\n", to: config)
        daemon.send(SIGHUP)

        // Then
        try daemon.waitForStatus("the record's album cached") { $0.cached == 1 }
        #expect(try daemon.stop() == 0)
    }
}
