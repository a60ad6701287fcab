import CoverdBase
import CoverdModel
import CoverdSync

// The messages the control server posts on the bus, for the event log.

/// The control socket is ready for `coverd refresh` and `coverd status --follow`.
public struct ControlListening: BusMessage {
    public var path: String
    /// True when it is the private fallback in the cache (no `XDG_RUNTIME_DIR`).
    public var isCacheFallback: Bool
}

/// A connection from another user was refused (contract §8: its own user only).
public struct ControlPeerRefused: BusMessage {
    public var uid: UInt32?
    public var pid: Int32?
    public var allowedUID: UInt32
}

/// A `coverd refresh` the daemon received, and what it answered.
public struct ControlRefreshAnswered: BusMessage {
    public var request: RefreshRequest
    public var result: RefreshResult
}
