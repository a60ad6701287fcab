/// A part of the daemon with its own work loop (a serial queue or a thread)
/// that can prove the loop still turns.
public protocol LivenessProbing: Sendable {
    /// Calls `reply` from the work loop itself, after the work queued before it.
    /// A hung loop never replies.
    func probe(_ reply: @escaping @Sendable () -> Void)
}
