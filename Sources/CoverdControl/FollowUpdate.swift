import CoverdBase
import CoverdModel

/// One line of `coverd status --follow`: the summary's counts, and the line
/// a person reads (the contract's STATUS= summary, then any notes).
public struct FollowUpdate: Sendable, Equatable {
    public var summary: SyncSummary
    public var line: String

    public init(summary: SyncSummary, line: String) {
        self.summary = summary
        self.line = line
    }

    /// `<N> albums: <C> cached, <P> pending, <F> failed`, then "; N waiting for a
    /// lookup", "; N outdated" and a note ("starting", "reloading") where they apply.
    public init(summary: SyncSummary, note: String?) {
        var line = summary.line
        if summary.awaitingLookup > 0 { line += "; \(summary.awaitingLookup) waiting for a lookup" }
        if summary.outdated > 0 { line += "; \(summary.outdated) outdated" }
        if let note { line += "; \(note)" }
        self.init(summary: summary, line: line)
    }

    /// The counts as a JSON object, with `status --json`'s names.
    var summaryJSON: String {
        "{\"albums\": \(summary.albums), \"cached\": \(summary.cached), \"pending\": \(summary.pending), "
            + "\"failed\": \(summary.failed), \"outdated\": \(summary.outdated), \"awaiting_lookup\": \(summary.awaitingLookup)}"
    }

    /// What `status --follow --json` prints: `{"summary": {...}, "line": "..."}`.
    public var json: String {
        "{\"summary\": \(summaryJSON), \"line\": \(JSONText.quote(line))}"
    }
}
