import Foundation

/// A fresh directory under the system temporary directory, removed when released.
public final class TestDirectory: Sendable {
    public let path: String

    public convenience init(_ label: String = "coverd-test") {
        self.init(base: NSTemporaryDirectory(), label)
    }

    /// A fresh directory under `base` (another filesystem, say).
    public init(base: String, _ label: String) {
        var base = base
        while base.hasSuffix("/") { base.removeLast() }
        let template = base + "/\(label).XXXXXX"
        var bytes = Array(template.utf8CString)
        let made = bytes.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(made != nil, "mkdtemp failed for \(template)")
        path = String(decoding: bytes.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }

    public func sub(_ name: String) -> String {
        let full = path + "/" + name
        try? FileManager.default.createDirectory(atPath: full, withIntermediateDirectories: true)
        return full
    }

    public func file(_ name: String) -> String { path + "/" + name }
}

/// Writes `bytes` to `path` atomically: a hidden temporary file in the same
/// directory (which coverd ignores), then a rename.
public func writeAtomically(_ bytes: [UInt8], to path: String) throws {
    let url = URL(fileURLWithPath: path)
    let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).\(UInt32.random(in: 0...UInt32.max)).tmp")
    try Data(bytes).write(to: temporary)
    guard rename(temporary.path, path) == 0 else { throw CocoaError(.fileWriteUnknown) }
}

public func writeAtomically(_ text: String, to path: String) throws {
    try writeAtomically(Array(text.utf8), to: path)
}

public func readBytes(_ path: String) -> [UInt8]? {
    FileManager.default.contents(atPath: path).map { [UInt8]($0) }
}
