// Messages about the daemon as a whole, posted by the daemon or by any part.

/// A step in the daemon's life, for the journal and for systemd.
public struct LifecycleChanged: BusMessage {
    public enum Phase: String, Sendable {
        case started, ready, reloading, stopping
    }

    public var phase: Phase
    public var detail: String

    public init(_ phase: Phase, detail: String = "") {
        self.phase = phase
        self.detail = detail
    }
}

/// SIGHUP, once the new settings are in place in every part (the daemon
/// hands each its own): rescan the records, retry failed covers.
public struct ReloadRequested: BusMessage {
    public init() {}
}

/// Something went wrong that is not about one album: the index could not be
/// written, a new configuration could not be applied. `severity` says how
/// much it matters (a note about cleaned-up leftovers is not an error).
public struct OperationFailed: BusMessage {
    public enum Severity: Sendable {
        case notice, warning, error
    }

    public var operation: String
    public var error: String
    public var severity: Severity

    public init(operation: String, error: String, severity: Severity = .error) {
        self.operation = operation
        self.error = error
        self.severity = severity
    }
}
