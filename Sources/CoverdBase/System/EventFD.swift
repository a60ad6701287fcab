import CLinux
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Owns a Linux eventfd, used to wake a thread blocked in poll(2) or
/// epoll_wait(2) from any other thread. Sendable because its only state is an immutable descriptor
/// and eventfd reads and writes are atomic in the kernel.
public final class EventFD: Sendable {
    public let descriptor: Int32

    public init() throws(SystemError) {
        let fd = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        guard fd >= 0 else { throw SystemError("eventfd", path: "") }
        descriptor = fd
    }

    deinit {
        close(descriptor)
    }

    /// Makes the descriptor readable until `drain()`; wakes are coalesced.
    public func signal() {
        var one: UInt64 = 1
        _ = withUnsafeBytes(of: &one) { write(descriptor, $0.baseAddress, 8) }
    }

    public func drain() {
        var value: UInt64 = 0
        _ = withUnsafeMutableBytes(of: &value) { read(descriptor, $0.baseAddress, 8) }
    }
}
