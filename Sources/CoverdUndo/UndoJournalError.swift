import CoverdBase

/// Why the undo journal could not be read or written.
public enum UndoJournalError: Error, Sendable, CustomStringConvertible {
    /// An entry that is not what coverd writes.
    public struct Damage: Error, Sendable, CustomStringConvertible {
        public var reason: String
        init(_ reason: String) { self.reason = reason }
        public var description: String { reason }
    }

    case system(SystemError)
    case damaged(path: String, Damage)
    case unreadable(path: String, FileReadError)

    public var description: String {
        switch self {
        case .system(let error): return "\(error)"
        case .damaged(let path, let damage): return "the undo journal's entry \(path) is damaged: \(damage.reason)"
        case .unreadable(let path, let error): return "cannot read the undo journal's entry \(path): \(error)"
        }
    }
}
