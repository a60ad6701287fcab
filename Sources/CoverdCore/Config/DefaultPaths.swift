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

/// Joins two path parts with exactly one slash.
func join(_ base: String, _ child: String) -> String {
    if base.hasSuffix("/") { return base + child }
    return base + "/" + child
}

/// Expands a leading `~` and makes a relative path absolute against `directory`.
public func resolvePath(_ path: String, relativeTo directory: String, home: String?) -> String {
    var expanded = path
    if let home, path == "~" || path.hasPrefix("~/") {
        expanded = home + path.dropFirst()
    }
    if expanded.hasPrefix("/") { return normalisePath(expanded) }
    return normalisePath(join(directory, expanded))
}

/// Removes `.` components, repeated slashes and a trailing slash; keeps `..`
/// as written, since it may cross a symbolic link.
public func normalisePath(_ path: String) -> String {
    let parts = path.split(separator: "/", omittingEmptySubsequences: true).filter { $0 != "." }
    return "/" + parts.joined(separator: "/")
}
