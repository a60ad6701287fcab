import CoverdSync

/// What a client asks of the daemon, one per connection (the protocol is in `ControlProtocol`).
public enum ControlRequest: Sendable, Equatable {
    /// `coverd refresh`: answered with `.refreshed` or `.unknown`, then the connection closes.
    case refresh(RefreshRequest)
    /// `coverd status --follow`: the current progress at once, then each change, until either side leaves.
    case follow
}
