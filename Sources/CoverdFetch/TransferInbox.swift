import Synchronization
import CoverdBase
import CoverdModel

/// What other threads ask of the transfer loop.
enum TransferCommand: Sendable {
    case start(FetchID, CoverURL, FetchPurpose, @Sendable (FetchOutcome) -> Void)
    case cancel(FetchID)
    case settings(TransferOptions)
    case probe(@Sendable () -> Void)
    /// Answered with the body budget as it stands between two turns of the loop.
    case inspectBudget(@Sendable (BodyBudget.Snapshot) -> Void)
    /// A delivered body of this many bytes was written or dropped.
    case bodyConsumed(bytes: Int)
    case shutdown
}

/// The only way into the transfer thread: commands queue here and an eventfd
/// wakes the loop from its epoll wait. Thread-safe through its mutex.
///
/// Wake-ups are coalesced: only the first command queued since the loop's
/// last `drain` writes to the eventfd (a 10,000-cover sync queues two
/// commands a cover, a start and a consumed body). Nothing is lost as long
/// as the loop reads the eventfd only between its wait and its next `drain`
/// (`TransferLoop.run`): a command queued before a `drain` is in what that
/// `drain` returns, and the first one queued after it signals, and so ends
/// the next wait.
final class TransferInbox: Sendable {
    private let state = Mutex<(commands: [TransferCommand], closed: Bool, signalled: Bool)>(([], false, false))
    let wake: EventFD

    init() throws(SystemError) {
        wake = try EventFD()
    }

    /// Queues `command`; false once the loop has closed the inbox (it is not queued then).
    @discardableResult
    func send(_ command: TransferCommand) -> Bool {
        let (accepted, signal) = state.withLock { state -> (Bool, Bool) in
            guard !state.closed else { return (false, false) }
            state.commands.append(command)
            defer { state.signalled = true }
            return (true, !state.signalled)
        }
        if signal { wake.signal() }
        return accepted
    }

    func drain() -> [TransferCommand] {
        state.withLock { state in
            defer {
                state.commands = []
                state.signalled = false
            }
            return state.commands
        }
    }

    /// Refuses further commands and returns those still queued, atomically:
    /// every command is either returned here or refused at `send`.
    func close() -> [TransferCommand] {
        state.withLock { state in
            state.closed = true
            defer { state.commands = [] }
            return state.commands
        }
    }
}
