import Dispatch
import Foundation
import Logging
import CoverdBase
import CoverdCache
import CoverdControl
import CoverdModel
import CoverdRecords
import CoverdSync

/// Logs what happens, by observing the bus: every rejected record, every
/// album added or removed, every cover cached or failed, each with the
/// structured fields of contract §6 (`event`, `album_id`, `record`, `url`,
/// `http_status`, `bytes`, `duration_ms`, `error`) as metadata.
///
/// One observer per message type on one serial queue, so lines keep the
/// order in which their messages were posted from any one thread.
public final class EventLogger: Sendable {
    private let queue = DispatchQueue(label: "coverd.log")
    private let tokens: [ObservationToken]

    public init(bus: EventBus, logger: Logger) {
        let queue = self.queue
        func on<Message: BusMessage>(_ type: Message.Type, _ body: @escaping @Sendable (Message) -> Void) -> ObservationToken {
            bus.observe(type, on: queue, handler: body)
        }
        tokens = [
            on(LifecycleChanged.self) { EventLogger.log(logger, $0) },
            on(RecordRejected.self) { message in
                let rejection = message.rejection
                logger.warning(
                    "rejected album in \(rejection.record): \(rejection.position): \(rejection.error)",
                    metadata: ["event": "record_invalid", "record": "\(rejection.record)", "error": "\(rejection.error)"])
            },
            on(RecordFileFailed.self) { message in
                logger.warning(
                    "cannot use record file \(message.error.path): \(message.error.reason)",
                    metadata: ["event": "record_invalid", "record": "\(message.error.path)", "error": "\(message.error.reason)"])
            },
            on(DuplicateAlbumFound.self) { message in
                let duplicate = message.duplicate
                logger.warning(
                    "album \(duplicate.id) appears twice: using \(duplicate.kept), ignoring \(duplicate.ignored)",
                    metadata: ["event": "record_invalid", "album_id": "\(duplicate.id)", "record": "\(duplicate.ignored)",
                               "error": "duplicate album id"])
            },
            on(AlbumsAdded.self) { message in
                // A first scan of thousands of albums is one line at info; each album is one at debug.
                let each: Logger.Level = message.albums.count > EventLogger.bulk ? .debug : .info
                if each == .debug {
                    let records = Set(message.albums.map(\.record)).count
                    logger.info("\(message.albums.count) albums added from \(records) record files", metadata: ["event": "album_added"])
                }
                for album in message.albums {
                    var metadata = EventLogger.fields(of: album, url: album.coverURL)
                    metadata["event"] = "album_added"
                    logger.log(
                        level: each, "album \(album.id) added: \(album.artist) – \(album.title) (\(album.record))",
                        metadata: metadata)
                }
            },
            on(AlbumRemoved.self) { message in
                var metadata: Logger.Metadata = ["event": "album_removed", "album_id": "\(message.id)", "record": "\(message.record)"]
                if let url = message.coverURL { metadata["url"] = "\(url)" }
                let kept = message.keptUntil.map { "; its cover is kept until \(EventLogger.describeDate($0)) in case it comes back" } ?? ""
                logger.info("album \(message.id) removed: its record is gone\(kept)", metadata: metadata)
            },
            on(CoverRestored.self) { message in
                var metadata = EventLogger.fields(of: message.album, url: message.album.coverURL)
                // The contract's events are a closed set: a cover back from keeping is cached, and says how.
                metadata["event"] = "cover_cached"
                metadata["restored"] = "kept"
                logger.info("album \(message.album.id) came back: its kept cover is \(message.path) again, without a download", metadata: metadata)
            },
            on(KeptCoversPurged.self) { message in
                logger.info(
                    "deleted the kept covers of \(message.count) album(s) removed more than \(EventLogger.describeDelay(message.keptFor.seconds)) ago")
            },
            on(CoverRevalidated.self) { message in
                // Confirmed, not downloaded: the contract's closed set of events has no other name for it.
                var metadata = EventLogger.fields(of: message.album, url: message.url)
                metadata["event"] = "cover_cached"
                metadata["revalidated"] = "not_modified"
                metadata["http_status"] = "304"
                metadata["duration_ms"] = "\(message.duration.milliseconds)"
                logger.info("cover of album \(message.album.id) is current (304 from \(message.url)); \(message.path) unchanged", metadata: metadata)
            },
            on(RevalidationFailed.self) { message in
                var metadata = EventLogger.fields(of: message.album, url: message.url)
                metadata["error"] = "\(message.reason)"
                metadata["revalidated"] = "failed"
                if let status = message.httpStatus { metadata["http_status"] = "\(status)" }
                logger.warning(
                    "could not revalidate the cover of album \(message.album.id) (\(message.reason)); it stays cached, outdated, and is asked again at \(EventLogger.describeDate(message.retryAt))",
                    metadata: metadata)
            },
            on(CoverCached.self) { message in
                let milliseconds = message.duration.milliseconds
                var metadata = EventLogger.fields(of: message.album, url: message.url)
                metadata["event"] = "cover_cached"
                metadata["bytes"] = "\(message.bytes)"
                metadata["duration_ms"] = "\(milliseconds)"
                metadata["source"] = "\(message.source.rawValue)"
                if let release = message.album.releaseID ?? message.releaseID { metadata["mbid"] = "\(release)" }
                if let group = message.album.releaseGroupID ?? message.releaseGroupID { metadata["release_group_mbid"] = "\(group)" }
                if let status = message.httpStatus { metadata["http_status"] = "\(status)" }
                if message.revalidated { metadata["revalidated"] = "updated" }
                let found = message.source == .url ? "" : " (found by \(message.source.rawValue))"
                logger.info(
                    "cached cover for album \(message.album.id): \(message.bytes) bytes from \(message.url)\(found) in \(milliseconds) ms",
                    metadata: metadata)
            },
            on(CoverFailed.self) { EventLogger.log(logger, $0) },
            on(CachedCoversLost.self) { EventLogger.log(logger, $0) },
            on(CoversWaitingForRoom.self) { message in
                let wait = EventLogger.describeDelay(message.retryAt.timeIntervalSinceNow)
                logger.notice(
                    "still no room in the cache for \(message.count) cover(s) (the largest \(message.largestBytes) bytes); looking again in \(wait)",
                    metadata: ["bytes": "\(message.largestBytes)"])
            },
            on(CachedCoversChecked.self) { message in
                logger.info(
                    "checked the \(message.compared) covers the index lists as cached in \(message.duration.milliseconds) ms: \(message.lost) to fetch again",
                    metadata: ["duration_ms": "\(message.duration.milliseconds)"])
            },
            on(OperationFailed.self) { message in
                let text: Logger.Message = "cannot \(message.operation): \(message.error)"
                switch message.severity {
                case .notice: logger.notice("\(message.operation): \(message.error)")
                case .warning: logger.warning(text, metadata: ["error": "\(message.error)"])
                case .error: logger.error(text, metadata: ["error": "\(message.error)"])
                }
            },
            on(CacheDurabilityChosen.self) { message in
                logger.info("covers in \(message.directory) are made durable by \(message.method)")
            },
            on(ControlListening.self) { message in
                let fallback = message.isCacheFallback ? " (XDG_RUNTIME_DIR is unset: the private fallback in the cache)" : ""
                logger.info("listening for coverd refresh and status --follow on \(message.path)\(fallback)")
            },
            on(ControlPeerRefused.self) { message in
                let who = message.uid.map { "uid \($0)" } ?? "a peer whose credentials cannot be read"
                let pid = message.pid.map { " (pid \($0))" } ?? ""
                logger.warning(
                    "refused a control connection from \(who)\(pid): only uid \(message.allowedUID) may use it",
                    metadata: ["error": "control connection from another user"])
            },
            on(ControlRefreshAnswered.self) { EventLogger.log(logger, $0) },
            on(SyncProgress.self) { message in
                logger.debug("\(message.summary.line)")
            },
            on(RecordScanCompleted.self) { message in
                let counts = "\(message.albumCount) albums in \(message.fileCount) record files"
                switch message.reason {
                case .overflow:
                    logger.warning("the inotify queue overflowed (events were lost); rescanned the records: \(counts)")
                case .reload:
                    logger.info("rescanned the records: \(counts)")
                case .startup:
                    logger.debug("scanned the records: \(counts)")
                }
            },
        ]
    }

    /// More albums than this in one batch are announced in one line.
    static let bulk = 20

    /// Waits until every message posted so far is logged.
    public func flush() {
        queue.sync {}
    }

    private static func log(_ logger: Logger, _ message: LifecycleChanged) {
        let text: String
        switch message.phase {
        case .started: text = "coverd \(CoverdVersion.string) starting"
        case .ready: text = "ready"
        case .reloading: text = "reloading"
        case .stopping: text = "stopping"
        }
        let line = message.detail.isEmpty ? text : "\(text): \(message.detail)"
        logger.notice("\(line)", metadata: ["event": "\(message.phase.rawValue)"])
    }

    /// One warning per cover, or, for a whole cache gone at once, one warning
    /// and each cover at debug: 100,000 lines would crowd out everything else
    /// (journald drops a service's lines beyond its rate limit).
    private static func log(_ logger: Logger, _ message: CachedCoversLost) {
        let each: Logger.Level = message.covers.count > bulk ? .debug : .warning
        if each == .debug {
            logger.warning(
                "\(message.covers.count) cached covers were missing or corrupt; fetching them again",
                metadata: ["error": "cached covers missing or corrupt"])
        }
        for cover in message.covers {
            var metadata = fields(of: cover.album, url: cover.album.coverURL)
            metadata["error"] = "\(cover.reason)"
            logger.log(level: each, "\(cover.reason): album \(cover.album.id) at \(cover.path); fetching it again", metadata: metadata)
        }
    }

    private static func log(_ logger: Logger, _ message: ControlRefreshAnswered) {
        let request = message.request
        let what = request.all ? "every cover" : "\(request.ids.count) cover(s)"
        let how = request.mark == .erase ? "erase and fetch anew" : "revalidate"
        switch message.result {
        case .refreshed(let count):
            logger.info("coverd refresh: \(how) \(what): refreshing \(count)")
        case .unknown(let ids):
            let names = ids.prefix(5).map(\.rawValue).joined(separator: ", ") + (ids.count > 5 ? ", …" : "")
            logger.notice("coverd refresh: unknown album id(s) \(names); nothing changed")
        }
    }

    private static func log(_ logger: Logger, _ message: CoverFailed) {
        var metadata = fields(of: message.album, url: message.url)
        metadata["event"] = "cover_failed"
        metadata["error"] = "\(message.reason)"
        if message.nothingFound { metadata["lookup"] = "not_found" }  // Told apart without parsing the error.
        if let status = message.httpStatus { metadata["http_status"] = "\(status)" }
        if let duration = message.duration { metadata["duration_ms"] = "\(duration.milliseconds)" }
        let wait = message.retryAt.map { describeDelay($0.timeIntervalSinceNow) } ?? "later"
        let what = message.url.map { " (\($0))" } ?? ""
        if message.permanent {
            logger.error("cover for album \(message.album.id) failed: \(message.reason)\(what); next try in \(wait)", metadata: metadata)
        } else {
            logger.warning(
                "cover for album \(message.album.id) not fetched (attempt \(message.attempt)): \(message.reason)\(what); retrying in \(wait)",
                metadata: metadata)
        }
    }

    /// The fields every line about an album carries: its id and record, the
    /// URL in question if there is one, and the MusicBrainz ids its record gives.
    private static func fields(of album: Album, url: CoverURL?) -> Logger.Metadata {
        var metadata: Logger.Metadata = ["album_id": "\(album.id)", "record": "\(album.record)"]
        if let url { metadata["url"] = "\(url)" }
        if let release = album.releaseID { metadata["mbid"] = "\(release)" }
        if let group = album.releaseGroupID { metadata["release_group_mbid"] = "\(group)" }
        return metadata
    }

    /// A moment for a log line, in UTC, to the second.
    static func describeDate(_ date: Date) -> String {
        date.formatted(.iso8601.year().month().day().time(includingFractionalSeconds: false).timeZone(separator: .omitted))
    }

    static func describeDelay(_ seconds: TimeInterval) -> String {
        let value = max(0, seconds)
        if value < 10 { return String(format: "%.1f s", value) }
        if value < 120 { return "\(Int(value.rounded())) s" }
        if value < 7200 { return "\(Int((value / 60).rounded())) min" }
        return "\(Int((value / 3600).rounded())) h"
    }
}
