import Synchronization

/// What other threads ask of the transfer loop.
enum TransferCommand: Sendable {
    case start(FetchID, CoverURL, @Sendable (FetchOutcome) -> Void)
    case cancel(FetchID)
    case settings(TransferSetup)
    case probe(@Sendable () -> Void)
    case shutdown
}

/// The only way into the transfer thread: commands queue here and an eventfd
/// wakes the loop from `curl_multi_poll`. Thread-safe through its mutex.
final class TransferInbox: Sendable {
    private let commands = Mutex<[TransferCommand]>([])
    let wake: EventFD

    init() throws(SystemError) {
        wake = try EventFD()
    }

    func send(_ command: TransferCommand) {
        commands.withLock { $0.append(command) }
        wake.signal()
    }

    func drain() -> [TransferCommand] {
        commands.withLock { commands in
            defer { commands = [] }
            return commands
        }
    }
}
