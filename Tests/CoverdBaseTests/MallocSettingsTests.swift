import CLinux
@testable import CoverdBase
import Glibc
import Testing

/// The allocator settings a sync's peak memory depends on.
@Suite("Malloc settings", .serialized)
struct MallocSettingsTests {
    /// AddressSanitizer replaces glibc's allocator, whose `mallopt` then refuses every setting (`make asan-test`).
    static let underAddressSanitizer = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__asan_init") != nil

    @Test("Given the daemon's allocator settings, when applied, then glibc accepts each of them",
          .disabled(if: underAddressSanitizer, "AddressSanitizer's allocator is not glibc's"))
    func settingsAccepted() {
        #expect(MallocSettings.apply())
    }

    @Test("Given a release of free pages just made, when asked again within its interval, then nothing is released until the interval has passed")
    func releasesAtMostOncePerInterval() {
        // Given
        let release = FreePageRelease(interval: .milliseconds(250))
        let start = ContinuousClock.now

        // When
        let first = release.releaseIfDue(now: start)
        let soon = release.releaseIfDue(now: start + .milliseconds(100))
        let later = release.releaseIfDue(now: start + .milliseconds(250))
        let again = release.releaseIfDue(now: start + .milliseconds(300))

        // Then
        #expect(first)
        #expect(!soon)
        #expect(later)
        #expect(!again)
    }
}
