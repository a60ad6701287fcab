import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CoverdBase

/// What a pass over the records produced, for the watcher to post.
struct RecordTreeOutput {
    var change = CatalogChange()
    var rejections: [RecordRejection] = []
    var fileErrors: [RecordFileError] = []
    var problems: [SystemError] = []
    var overflowed = false
    /// Record files and directories that exist but could not be read: the
    /// albums they held stay, whatever a scan did not see in them.
    var unreadable: Set<String> = []
    /// Record files and directories that went away.
    var gone: [String] = []
    /// Files found in a just-created directory that did not parse and were
    /// modified a moment ago: probably still being written. Read them again later.
    var recheck: [String] = []
    /// The records directory itself was deleted or moved away.
    var rootGone = false
}

/// The records directory as the watcher knows it: the catalog of albums by
/// file, the inotify watches, and each file's identity at its last read (so a
/// rescan after an overflow only re-reads what changed).
/// Not thread-safe: owned by the watcher's queue.
struct RecordTree {
    let root: String
    var reader: RecordFileReader
    let inotify: Inotify
    private(set) var catalog = RecordCatalog()
    private var signatures: [String: FileSignature] = [:]
    /// How many times a file's signature was taken (a `stat`): for tests.
    private(set) var signaturesTaken = 0

    struct FileSignature: Equatable, Sendable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var mtime: Int64
    }

    init(root: String, reader: RecordFileReader) throws(SystemError) {
        self.root = root
        self.reader = reader
        inotify = try Inotify()
    }

    /// Watches and reads the whole tree. `force` re-reads unchanged files too (reload).
    mutating func scan(force: Bool, into output: inout RecordTreeOutput) {
        let fromEmpty = catalog.fileCount == 0 && output.change.isEmpty
        if fromEmpty { output.change = CatalogChange.additionsToEmptyCatalog() }
        // Deferred: the winners are read once everything below, removals included, is recorded.
        defer { if fromEmpty { output.change.keepWinners { catalog.album($0) } } }
        var seen: Set<String> = []
        scanDirectory(root, force: force, seen: &seen, into: &output)
        let unreadableDirectories = output.unreadable.map { $0 + "/" }
        for path in catalog.paths where !seen.contains(path) && !unreadableDirectories.contains(where: path.hasPrefix) {
            output.change.merge(catalog.remove(path: path))
            output.gone.append(path)
        }
        signatures = signatures.filter { seen.contains($0.key) || unreadableDirectories.contains(where: $0.key.hasPrefix) }
    }

    /// Ends a batch of changes (a scan, a drain of events, rechecks): lookup tables the catalog made go.
    mutating func endBatch() {
        catalog.releaseTables()
    }

    /// Applies queued inotify events. File events for the same path within
    /// one batch collapse into the last one, so a file is read once per batch.
    mutating func drainEvents(into output: inout RecordTreeOutput) {
        let (events, overflowed) = inotify.readEvents()
        if overflowed { output.overflowed = true }
        var pending = PendingFileActions()
        for event in events {
            if event.name.isEmpty {
                if event.path == root && (event.has(IN_DELETE_SELF) || event.has(IN_MOVE_SELF)) {
                    output.rootGone = true
                }
                continue
            }
            if event.name.hasPrefix(".") { continue }
            if !event.validName {
                if event.has(IN_CLOSE_WRITE) || event.has(IN_MOVED_TO) { reportUnusableName(event.path, into: &output) }
                continue
            }
            if event.isDirectory {
                apply(&pending, into: &output)  // Keep file and directory changes in order.
                if event.has(IN_CREATE) || event.has(IN_MOVED_TO) {
                    var seen: Set<String> = []
                    // A just-created directory may be filling up (`mkdir d && cp x.json d/`).
                    scanDirectory(event.path, force: true, fresh: event.has(IN_CREATE), seen: &seen, into: &output)
                } else if event.has(IN_DELETE) || event.has(IN_MOVED_FROM) {
                    inotify.unwatch(under: event.path)
                    output.change.merge(catalog.remove(under: event.path))
                    output.gone.append(event.path)
                    signatures = signatures.filter { !$0.key.hasPrefix(event.path + "/") }
                }
                continue
            }
            guard let kind = RecordFileKind(fileName: event.name) else { continue }
            if event.has(IN_CLOSE_WRITE) || event.has(IN_MOVED_TO) {
                pending.set(event.path, .read(kind))
            } else if event.has(IN_DELETE) || event.has(IN_MOVED_FROM) {
                pending.set(event.path, .forget)
            } else if event.has(IN_CREATE) && isCompleteOnCreation(event.path) {
                // A symbolic link or a hard link is complete when it appears; no close-after-write follows.
                pending.set(event.path, .read(kind))
            }
        }
        apply(&pending, into: &output)
    }

    private mutating func apply(_ pending: inout PendingFileActions, into output: inout RecordTreeOutput) {
        for (path, action) in pending.ordered {
            switch action {
            case .read(let kind): read(path, kind: kind, into: &output)
            case .forget: forget(path, into: &output)
            }
        }
        pending = PendingFileActions()
    }

    /// The records directory was deleted or moved away: its albums go, and it
    /// is made again and watched, so that records dropped into a recreated
    /// directory are still noticed.
    mutating func recreateRoot(into output: inout RecordTreeOutput) {
        inotify.unwatch(under: root)
        output.change.merge(catalog.remove(under: root))
        output.gone.append(root)
        signatures = [:]
        do {
            try makeDirectories(root)
        } catch {
            output.problems.append(error)
            return
        }
        var seen: Set<String> = []
        scanDirectory(root, force: true, seen: &seen, into: &output)
    }

    /// Reads a file again after a pause (see `RecordTreeOutput.recheck`), reporting problems this time.
    mutating func recheck(_ path: String, into output: inout RecordTreeOutput) {
        guard let kind = RecordFileKind(fileName: (path as NSString).lastPathComponent) else { return }
        read(path, kind: kind, into: &output)
    }

    private mutating func scanDirectory(
        _ directory: String, force: Bool, fresh: Bool = false, seen: inout Set<String>, into output: inout RecordTreeOutput
    ) {
        // Watch first, then list: a file created in between is seen by one or the other.
        do {
            try inotify.watch(directory)
        } catch {
            output.problems.append(error)
        }
        guard let listing = listDirectory(directory) else {
            output.problems.append(SystemError("opendir", path: directory))
            output.unreadable.insert(directory)
            return
        }
        var entries: [(name: String, type: UInt8)] = []
        for entry in listing where entry.rawName.first != UInt8(ascii: ".") {
            guard let name = entry.name else {
                reportUnusableName(directory + "/" + entry.displayName, into: &output)
                continue
            }
            entries.append((name, entry.type))
        }
        let sorted = entries.sorted(by: { $0.name < $1.name })
        // Each record file's signature is taken once, here, before it is read:
        // the unchanged ones are done with, the others are read. They are read
        // and decoded in parallel (the decoding is most of a start-up over
        // many albums); the results are applied to the catalog in name order
        // below, as before.
        var stale: [(path: String, kind: RecordFileKind, identity: FileSignature?)] = []
        for (name, type) in sorted where type != UInt8(DT_DIR) {
            guard let kind = RecordFileKind(fileName: name) else { continue }
            let path = directory + "/" + name
            let identity = signature(of: path)
            if force || identity != signatures[path] || !catalog.contains(path: path) { stale.append((path, kind, identity)) }
        }
        let identities = Dictionary(stale.map { ($0.path, $0.identity) }, uniquingKeysWith: { first, _ in first })
        var prefetched = RecordPrefetch.read(stale, with: reader)
        for (name, type) in sorted {
            let path = directory + "/" + name
            var entryType = type
            if entryType == UInt8(DT_UNKNOWN) {
                var info = stat()
                guard lstat(path, &info) == 0 else { continue }
                entryType = info.st_mode & S_IFMT == S_IFDIR ? UInt8(DT_DIR) : UInt8(DT_REG)
            }
            if entryType == UInt8(DT_DIR) {
                scanDirectory(path, force: force, fresh: fresh, seen: &seen, into: &output)
            } else if let kind = RecordFileKind(fileName: name) {
                seen.insert(path)
                if let early = prefetched.removeValue(forKey: path) {
                    read(path, kind: kind, mayBeIncomplete: fresh, prefetched: early, into: &output)
                } else if let identity = identities[path] {
                    read(path, kind: kind, mayBeIncomplete: fresh, identity: identity, into: &output)
                }
            }
        }
    }

    /// Reads one record file into the catalog. A file that cannot be used
    /// keeps the albums it held before; one that vanished is forgotten.
    /// `identity` is its signature taken before the read, when the caller has one.
    private mutating func read(
        _ path: String, kind: RecordFileKind, mayBeIncomplete: Bool = false, prefetched: RecordPrefetch.Result? = nil,
        identity known: FileSignature?? = nil, into output: inout RecordTreeOutput
    ) {
        let identity = prefetched.map(\.identity) ?? known ?? signature(of: path)
        do throws(RecordFileError) {
            let contents: RecordContents
            if let prefetched { contents = try prefetched.contents.get() } else { contents = try reader.read(path, kind: kind) }
            catalog.update(path: path, albums: contents.albums, into: &output.change)
            output.rejections += contents.rejections
        } catch {
            var info = stat()
            if case .cannotOpen(_, let code) = error, code == ENOENT, lstat(path, &info) != 0 {
                forget(path, into: &output)  // Gone; a dangling symbolic link is reported instead.
                return
            }
            if mayBeIncomplete, error.isAboutContent, let identity, Date().timeIntervalSince1970 - Double(identity.mtime) / 1e9 < 2 {
                output.recheck.append(path)
                return
            }
            output.fileErrors.append(error)
            output.unreadable.insert(path)
        }
        signatures[path] = identity
    }

    /// A record-like name that is not UTF-8 cannot be represented (or opened) by name: say so.
    private func reportUnusableName(_ path: String, into output: inout RecordTreeOutput) {
        let name = (path as NSString).lastPathComponent
        guard RecordFileKind(fileName: name) != nil else { return }
        output.fileErrors.append(.unusableName(path: path))
    }

    private mutating func forget(_ path: String, into output: inout RecordTreeOutput) {
        signatures[path] = nil
        output.change.merge(catalog.remove(path: path))
        output.gone.append(path)
    }

    static func signature(of path: String) -> FileSignature? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return FileSignature(
            device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: Int64(info.st_size),
            mtime: Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec))
    }

    private mutating func signature(of path: String) -> FileSignature? {
        signaturesTaken += 1
        return RecordTree.signature(of: path)
    }

    private func isCompleteOnCreation(_ path: String) -> Bool {
        var info = stat()
        guard lstat(path, &info) == 0 else { return false }
        return info.st_mode & S_IFMT == S_IFLNK || info.st_nlink > 1
    }
}

/// File actions of one inotify batch, the last per path, in order of their last event.
private struct PendingFileActions {
    enum Action {
        case read(RecordFileKind)
        case forget
    }

    private var order: [String] = []
    private var actions: [String: (sequence: Int, action: Action)] = [:]

    mutating func set(_ path: String, _ action: Action) {
        order.append(path)
        actions[path] = (order.count - 1, action)
    }

    var ordered: [(String, Action)] {
        order.enumerated().compactMap { index, path in
            guard let entry = actions[path], entry.sequence == index else { return nil }
            return (path, entry.action)
        }
    }
}
