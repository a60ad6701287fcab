import Logging

/// What coverd's log handlers (stderr and journal) have in common: the level
/// is the daemon's shared `LogLevelSetting`, so a reload changes it for every
/// logger, unless one logger's level was set (its handler's own, as swift-log
/// asks of a value type); metadata is merged in swift-log's order of precedence.
public protocol LevelSharingLogHandler: LogHandler {
    var level: LogLevelSetting { get }
    /// This handler's level once set on its logger; nil follows `level`.
    var ownLevel: Logger.Level? { get set }
}

extension LevelSharingLogHandler {
    public var logLevel: Logger.Level {
        get { ownLevel ?? level.current }
        set { ownLevel = newValue }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// The handler's metadata, overridden by the metadata provider's, overridden
    /// by the event's own. Thousands of lines in a sync: nothing is merged when
    /// only the event has metadata.
    package func mergedMetadata(_ event: LogEvent) -> Logger.Metadata {
        var fields = event.metadata ?? [:]
        if let provided = metadataProvider?.get(), !provided.isEmpty { fields.merge(provided) { fromEvent, _ in fromEvent } }
        if !metadata.isEmpty { fields.merge(metadata) { kept, _ in kept } }
        return fields
    }
}
