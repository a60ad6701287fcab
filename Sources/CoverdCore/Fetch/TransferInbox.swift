import Synchronization

/// What other threads ask of the transfer loop.
enum TransferCommand: Sendable {
    case start(FetchID, CoverURL, @Sendable (FetchOutcome) -> Void)
    case cancel(FetchID)
    case settings(TransferSetup)
    case probe(@Sendable () -> Void)
    case bodyConsumed
    case shutdown
}

/// The only way into the transfer thread: commands queue here and an eventfd
/// wakes the loop from its epoll wait. Thread-safe through its mutex.
final class TransferInbox: Sendable {
    private let state = Mutex<(commands: [TransferCommand], closed: Bool)>(([], false))
    let wake: EventFD

    init() throws(SystemError) {
        wake = try EventFD()
    }

    /// Queues `command`; false once the loop has closed the inbox (it is not queued then).
    @discardableResult
    func send(_ command: TransferCommand) -> Bool {
        let accepted = state.withLock { state -> Bool in
            guard !state.closed else { return false }
            state.commands.append(command)
            return true
        }
        if accepted { wake.signal() }
        return accepted
    }

    func drain() -> [TransferCommand] {
        state.withLock { state in
            defer { state.commands = [] }
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
