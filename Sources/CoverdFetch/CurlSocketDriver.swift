import CCurl
import CLinux
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CoverdBase

/// Drives a multi handle with `curl_multi_socket_action`: libcurl says,
/// through its socket and timer callbacks, which sockets to watch and when
/// its next timeout is due; an epoll set watches those sockets and the
/// transfer inbox's eventfd, and only the sockets that are ready are acted on.
///
/// Why not `curl_multi_perform` after `curl_multi_poll`: a perform call looks
/// at every transfer, and libcurl 7.88 polls each one's socket with a zero
/// timeout to learn whether it is readable, most of a sync's `poll` calls
/// (bench/HISTORY.md).
///
/// Threading: made, used and released on the transfer thread. libcurl calls
/// the callbacks only from inside multi calls made there; they reach this
/// object through an unretained pointer, valid because the callbacks are
/// unset in `deinit` before the multi handle can outlive it.
final class CurlSocketDriver {
    let multi: CurlMulti
    private let epollSet: EpollSet
    private var epoll: Int32 { epollSet.descriptor }
    private var wake: Int32 { epollSet.wake }
    /// The sockets added to the epoll set (a closed socket leaves it by itself).
    private var watched: Set<Int32> = []
    /// When libcurl wants `CURL_SOCKET_TIMEOUT`; nil when it has no timer.
    private var deadline: ContinuousClock.Instant?
    private var events = [epoll_event](repeating: epoll_event(), count: 64)
    /// Sockets libcurl asked to stop watching while the current batch of events is acted on.
    private var removedThisTurn: Set<Int32> = []
    /// While transfers run, a wait ends at least this often, and one that ends
    /// with no event gives libcurl a timeout action: belt and braces against a
    /// lost timer. (A socket whose readiness was lost is moved only by its
    /// transfer's own timers, the low-speed check or the total timeout: see `watch`.)
    static let defaultLongestWait: Duration = .seconds(1)
    private let longestWait: Duration

    /// `epoll` already watches its `wake` descriptor, readable when the loop has commands to handle.
    init(multi: CurlMulti, epoll: EpollSet, longestWait: Duration = CurlSocketDriver.defaultLongestWait) {
        self.multi = multi
        self.longestWait = longestWait
        self.epollSet = epoll
        let context = Unmanaged.passUnretained(self).toOpaque()
        coverd_multi_setopt_socket_function(multi.handle, curlSocketCallback)
        coverd_multi_setopt_pointer(multi.handle, CURLMOPT_SOCKETDATA, context)
        coverd_multi_setopt_timer_function(multi.handle, curlTimerCallback)
        coverd_multi_setopt_pointer(multi.handle, CURLMOPT_TIMERDATA, context)
    }

    deinit {
        coverd_multi_setopt_socket_function(multi.handle, nil)
        coverd_multi_setopt_pointer(multi.handle, CURLMOPT_SOCKETDATA, nil)
        coverd_multi_setopt_timer_function(multi.handle, nil)
        coverd_multi_setopt_pointer(multi.handle, CURLMOPT_TIMERDATA, nil)
    }

    /// Blocks until a watched socket is ready, libcurl's timer is due or the
    /// wake descriptor is readable, then lets libcurl act on what is ready.
    /// With `transfersActive` false it waits for the wake descriptor alone
    /// (no timeout at all), so an idle daemon sleeps without waking.
    /// Returns true when the wake descriptor was readable (it is left to the caller to drain).
    func waitAndAct(transfersActive: Bool) -> Bool {
        let count = epoll_wait(epoll, &events, Int32(events.count), waitMilliseconds(transfersActive: transfersActive))
        if count < 0 {
            let code = errno
            // EINTR (a stop and continue, say) just goes round again; anything else would spin here for ever.
            precondition(code == EINTR, "epoll_wait on the transfer loop's epoll set: \(SystemError.describe(code))")
        }
        var woken = false
        var running: Int32 = 0
        removedThisTurn.removeAll(keepingCapacity: true)
        for event in events.prefix(Int(max(count, 0))) {
            let fd = event.data.fd
            guard fd != wake else {
                woken = true
                continue
            }
            // Acting on an earlier event may have closed this socket and opened another under its number.
            guard !removedThisTurn.contains(fd) else { continue }
            var mask: Int32 = 0
            if event.events & EPOLLIN.rawValue != 0 { mask |= CURL_CSELECT_IN }
            if event.events & EPOLLOUT.rawValue != 0 { mask |= CURL_CSELECT_OUT }
            if event.events & (EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0 { mask |= CURL_CSELECT_ERR }
            curl_multi_socket_action(multi.handle, fd, mask, &running)
        }
        // A wait that timed out with transfers running acts too, even before libcurl's timer is due
        // (libcurl allows that, and reports its timer again).
        let due = (transfersActive && count == 0) || deadline.map { ContinuousClock.now >= $0 } ?? false
        if due {
            deadline = nil
            curl_multi_socket_action(multi.handle, CURL_SOCKET_TIMEOUT, 0, &running)
        }
        return woken
    }

    private func waitMilliseconds(transfersActive: Bool) -> Int32 {
        guard transfersActive else { return -1 }
        guard let deadline else { return Int32(clamping: longestWait.milliseconds) }
        let left = min(deadline - ContinuousClock.now, longestWait)
        guard left > .zero else { return 0 }
        return Int32(clamping: (left + .microseconds(999)).milliseconds)  // rounded up, so as not to wake early
    }

    fileprivate func watch(_ socket: Int32, _ what: Int32) {
        guard what != CURL_POLL_REMOVE else {
            if watched.remove(socket) != nil { epoll_ctl(epoll, EPOLL_CTL_DEL, socket, nil) }
            removedThisTurn.insert(socket)
            return
        }
        var event = epoll_event()
        event.events = (what & CURL_POLL_IN != 0 ? EPOLLIN.rawValue : 0) | (what & CURL_POLL_OUT != 0 ? EPOLLOUT.rawValue : 0)
        event.data.fd = socket
        // A descriptor number seen before may be a new socket (the old one closed and left the set), and the reverse.
        // Should both fail (ENOMEM, max_user_watches), the callback still returns 0: -1 would make libcurl
        // mark the whole multi handle dead. The transfer then moves only when its timers run libcurl
        // (the low-speed check, the total timeout), and fails and is retried at worst.
        let first = watched.insert(socket).inserted ? EPOLL_CTL_ADD : EPOLL_CTL_MOD
        if epoll_ctl(epoll, first, socket, &event) != 0 {
            epoll_ctl(epoll, first == EPOLL_CTL_ADD ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, socket, &event)
        }
    }

    /// libcurl truncates its timeouts to whole milliseconds, so a deadline of
    /// exactly `milliseconds` from now would usually come just before its timer
    /// expires and cost a second wake-up; one millisecond more avoids that.
    fileprivate func setTimer(milliseconds: Int) {
        guard milliseconds >= 0 else {
            deadline = nil
            return
        }
        deadline = ContinuousClock.now + .milliseconds(milliseconds == 0 ? 0 : milliseconds + 1)
    }
}

private let curlSocketCallback: curl_socket_callback = { _, socket, what, context, _ in
    guard let context else { return 0 }
    Unmanaged<CurlSocketDriver>.fromOpaque(context).takeUnretainedValue().watch(socket, what)
    return 0
}

private let curlTimerCallback: curl_multi_timer_callback = { _, milliseconds, context in
    guard let context else { return 0 }
    Unmanaged<CurlSocketDriver>.fromOpaque(context).takeUnretainedValue().setTimer(milliseconds: milliseconds)
    return 0
}
