import CoverdConfig
import CoverdSystemd

extension LogTarget {
    /// `auto` made concrete: the journal when standard error is the journal stream systemd connected.
    public func resolved(environment: [String: String]) -> LogTarget {
        guard self == .auto else { return self }
        return standardErrorIsJournal(environment: environment) ? .journal : .stderr
    }
}
