import CoverdBase

/// The default locations of contract §2, from the environment systemd and the
/// XDG base directory specification provide.
public struct DefaultPaths: Sendable, Equatable {
    public var records: String
    public var cache: String
    public var configFile: String

    public init(environment: [String: String]) {
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? "/"
        func xdg(_ name: String, _ fallback: String) -> String {
            // The XDG spec says relative values are invalid and must be ignored.
            if let value = environment[name], value.hasPrefix("/") { return value }
            return join(home, fallback)
        }
        // systemd sets CACHE_DIRECTORY / CONFIGURATION_DIRECTORY; several
        // directories are separated by ':' and the first is ours.
        func systemd(_ name: String) -> String? {
            guard let value = environment[name], let first = value.split(separator: ":").first, first.hasPrefix("/") else {
                return nil
            }
            return String(first)
        }
        records = join(xdg("XDG_DATA_HOME", ".local/share"), "coverd/albums")
        cache = systemd("CACHE_DIRECTORY") ?? join(xdg("XDG_CACHE_HOME", ".cache"), "coverd")
        configFile = join(systemd("CONFIGURATION_DIRECTORY") ?? join(xdg("XDG_CONFIG_HOME", ".config"), "coverd"), "coverd.toml")
    }
}
