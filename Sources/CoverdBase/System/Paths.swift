/// Joins two path parts with exactly one slash.
package func join(_ base: String, _ child: String) -> String {
    if base.hasSuffix("/") { return base + child }
    return base + "/" + child
}

/// Expands a leading `~` and makes a relative path absolute against `directory`.
package func resolvePath(_ path: String, relativeTo directory: String, home: String?) -> String {
    var expanded = path
    if let home, path == "~" || path.hasPrefix("~/") {
        expanded = home + path.dropFirst()
    }
    if expanded.hasPrefix("/") { return normalisePath(expanded) }
    return normalisePath(join(directory, expanded))
}

/// Removes `.` components, repeated slashes and a trailing slash; keeps `..`
/// as written, since it may cross a symbolic link.
package func normalisePath(_ path: String) -> String {
    let parts = path.split(separator: "/", omittingEmptySubsequences: true).filter { $0 != "." }
    return "/" + parts.joined(separator: "/")
}
