import Logging
import Synchronization

/// The daemon's current log level, shared by its log handlers so that a
/// reload can change it for every logger at once (swift-log allows such a
/// global override of the handler's value-typed level).
public final class LogLevelSetting: Sendable {
    private let level: Atomic<UInt8>

    public init(_ initial: Logger.Level) {
        level = Atomic(LogLevelSetting.code(initial))
    }

    public var current: Logger.Level {
        get { Logger.Level.allCases[Int(level.load(ordering: .relaxed))] }
        set { level.store(LogLevelSetting.code(newValue), ordering: .relaxed) }
    }

    private static func code(_ level: Logger.Level) -> UInt8 {
        UInt8(Logger.Level.allCases.firstIndex(of: level) ?? 2)
    }
}
