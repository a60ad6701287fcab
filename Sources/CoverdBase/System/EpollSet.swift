import CLinux
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Owns a Linux epoll instance, closed in `deinit`.
///
/// Made on the thread that can report its failure (`CurlFetcher.init`), then
/// handed to the thread that waits on it. Sendable because its only state is
/// an immutable descriptor; the epoll calls on it are thread-safe in the
/// kernel, and in coverd one thread alone adds, changes and waits.
package final class EpollSet: Sendable {
    package let descriptor: Int32
    /// The descriptor that wakes the waiting thread (it is in the set from the start).
    package let wake: Int32

    /// An epoll set that already watches `wake` for reading.
    package init(watching wake: Int32) throws(SystemError) {
        let fd = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard fd >= 0 else { throw SystemError("epoll_create1", path: "") }
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.fd = wake
        guard epoll_ctl(fd, EPOLL_CTL_ADD, wake, &event) == 0 else {
            let error = SystemError("epoll_ctl: add the transfer inbox's eventfd", path: "")
            close(fd)
            throw error
        }
        descriptor = fd
        self.wake = wake
    }

    deinit {
        close(descriptor)
    }
}
