import CLinux
import Synchronization

/// Hands the free pages inside glibc's arenas back to the kernel
/// (`malloc_trim(0)`) at most once per `interval`, when asked by work that
/// frees large buffers (a staged cover: its body and its rows). Covers of many
/// sizes leave holes between longer-lived blocks that the arenas keep
/// resident, and a sync's peak grew by them; asked only while work is done, an
/// idle daemon never wakes for it. The coordinator owns one, for every cover
/// it stages.
package final class FreePageRelease: Sendable {
    private let interval: Duration
    private let last = Mutex<ContinuousClock.Instant?>(nil)

    package init(interval: Duration) {
        self.interval = interval
    }

    /// Releases the free pages unless that was done less than `interval` before `now`; true when it did.
    @discardableResult
    package func releaseIfDue(now: ContinuousClock.Instant = .now) -> Bool {
        let due = last.withLock { last -> Bool in
            if let previous = last, now - previous < interval { return false }
            last = now
            return true
        }
        if due { MallocSettings.releaseFreePages() }
        return due
    }
}
