#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One entry of a directory listing.
package struct DirectoryEntry {
    /// The name, or nil when it is not valid UTF-8 (see `rawName`).
    package var name: String?
    package var rawName: [UInt8]
    /// `DT_DIR`, `DT_REG`, `DT_LNK`, … or `DT_UNKNOWN`.
    package var type: UInt8

    /// The name for messages: invalid bytes shown as U+FFFD.
    package var displayName: String { name ?? String(decoding: rawName, as: UTF8.self) }
}

/// The entries of `path` except `.` and `..`, or nil when it cannot be opened.
/// `keeping` sees each raw name first: entries it refuses cost no copy (a
/// cache of 100,000 covers is listed at every start for a few leftovers).
///
/// Names are read through a pointer up to their NUL: the last entry in
/// readdir's buffer can be shorter than `d_name`'s declared 256 bytes, so
/// copying the whole array would read past the buffer.
package func listDirectory(_ path: String, keeping: (UnsafeRawBufferPointer) -> Bool = { _ in true }) -> [DirectoryEntry]? {
    guard let dir = opendir(path) else { return nil }
    defer { closedir(dir) }
    guard let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name) else { return nil }
    var entries: [DirectoryEntry] = []
    while let entry = readdir(dir) {
        let base = UnsafeRawPointer(entry) + nameOffset
        let length = strlen(base.assumingMemoryBound(to: CChar.self))
        let name = UnsafeRawBufferPointer(start: base, count: length)
        guard keeping(name) else { continue }
        let raw = Array(name)
        if raw == [0x2E] || raw == [0x2E, 0x2E] { continue }
        entries.append(DirectoryEntry(name: String(validating: raw, as: UTF8.self), rawName: raw, type: entry.pointee.d_type))
    }
    return entries
}
