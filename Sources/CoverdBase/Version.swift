/// coverd's version, shown by `--version` and sent as `User-Agent: coverd/<version>`.
public enum CoverdVersion {
    public static let string = "0.1.0"
    public static var userAgent: String { "coverd/\(string)" }

    /// `coverd/<version> ( <contact> )`, as MusicBrainz asks of every client;
    /// without a contact, `coverd/<version>`.
    public static func userAgent(contact: String) -> String {
        contact.isEmpty ? userAgent : "\(userAgent) ( \(contact) )"
    }
}
