import Foundation
import Logging
import TOMLKit
import CoverdBase

/// A configuration problem, with the file, line and key it is about.
/// `coverd` exits with 78 (EX_CONFIG) on one.
public struct ConfigError: Error, Sendable, Equatable, CustomStringConvertible {
    public var file: String
    public var line: Int
    public var key: String?
    public var message: String

    public init(file: String, line: Int, key: String?, message: String) {
        self.file = file
        self.line = line
        self.key = key
        self.message = message
    }

    /// `file:line: key: message`; line 0 (the whole file: missing, unreadable) is left out.
    public var description: String {
        (line > 0 ? "\(file):\(line): " : "\(file): ") + (key.map { "\($0): " } ?? "") + message
    }
}

/// A scalar read from the TOML file, free of TOMLKit's types.
enum ConfigValue: Sendable {
    case string(String)
    case integer(Int)
    case real(Double)
    case boolean(Bool)
    case other(String)
}

/// Reads `coverd.toml` into a `Configuration`.
///
/// A missing default file means "all defaults"; a missing file that was asked
/// for by name is an error. Unknown keys are errors too, so a typo never
/// silently does nothing.
public struct ConfigLoader: Sendable {
    public var environment: [String: String]

    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.environment = environment
    }

    /// The file used when no `--config` is given.
    public var defaultFile: String { DefaultPaths(environment: environment).configFile }

    public func load(file explicitFile: String?) throws(ConfigError) -> Configuration {
        var configuration = Configuration.defaults(environment: environment)
        let file = explicitFile.map { resolvePath($0, relativeTo: FileManager.default.currentDirectoryPath, home: environment["HOME"]) } ?? defaultFile
        guard FileManager.default.fileExists(atPath: file) else {
            if explicitFile != nil {
                throw ConfigError(file: file, line: 0, key: nil, message: "configuration file does not exist")
            }
            return configuration
        }
        let bytes: [UInt8]
        do {
            bytes = try readRegularFile(file, limit: 1 << 20)
        } catch {
            let reason: String
            switch error {
            case .cannotOpen(let code), .readFailed(let code): reason = SystemError.describe(code)
            case .notRegularFile(let kind): reason = "it is \(kind), not a regular file"
            case .tooLarge(let size, let limit): reason = "it is \(size) bytes (limit \(limit))"
            }
            throw ConfigError(file: file, line: 0, key: nil, message: "cannot read the configuration file: \(reason)")
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw ConfigError(file: file, line: 0, key: nil, message: "the configuration file is not valid UTF-8")
        }
        try apply(text: text, file: file, to: &configuration)
        configuration.file = file
        return configuration
    }

    /// Applies the settings in `text` (read from `file`) over `configuration`.
    public func apply(text: String, file: String, to configuration: inout Configuration) throws(ConfigError) {
        let values: [(key: String, value: ConfigValue)]
        do {
            values = try ConfigLoader.flatten(text)
        } catch let error as TOMLParseError {
            throw ConfigError(file: file, line: error.source.begin.line, key: nil, message: "invalid TOML: \(error.description)")
        } catch {
            throw ConfigError(file: file, line: 1, key: nil, message: "invalid TOML: \(error)")
        }
        let locator = TOMLKeyLocator(text: text)
        let baseDirectory = (file as NSString).deletingLastPathComponent
        // In file order, so the first problem reported is the first in the file.
        let ordered = values.enumerated().sorted { (locator.line(of: $0.element.key), $0.offset) < (locator.line(of: $1.element.key), $1.offset) }
        for (key, value) in ordered.map(\.element) {
            do {
                try ConfigSchema.apply(key: key, value: value, to: &configuration, baseDirectory: baseDirectory, home: environment["HOME"])
            } catch {
                throw ConfigError(file: file, line: locator.line(of: key), key: key, message: error.message)
            }
        }
    }

    /// Every scalar in the document as (dotted key, value), in a stable order.
    static func flatten(_ text: String) throws -> [(key: String, value: ConfigValue)] {
        let table = try TOMLTable(string: text)
        var result: [(key: String, value: ConfigValue)] = []
        func walk(_ table: TOMLTable, prefix: String) {
            for key in table.keys.sorted() {
                guard let value = table[key] else { continue }
                let dotted = prefix.isEmpty ? key : prefix + "." + key
                if let child = value.table {
                    walk(child, prefix: dotted)
                } else if let int = value.int {
                    result.append((dotted, .integer(int)))
                } else if let double = value.double {
                    result.append((dotted, .real(double)))
                } else if let bool = value.bool {
                    result.append((dotted, .boolean(bool)))
                } else if let string = value.string {
                    result.append((dotted, .string(string)))
                } else {
                    result.append((dotted, .other("\(value.type)")))
                }
            }
        }
        walk(table, prefix: "")
        return result
    }
}

/// Finds the line where a dotted key is set, for error messages. TOMLKit
/// does not expose source positions of values, so this reads table headers
/// and `key =` lines directly; it falls back to the table header, then line 1.
struct TOMLKeyLocator {
    private var lines: [(table: String, key: String?, line: Int)] = []

    init(text: String) {
        var table = ""
        var openString: String?  // The delimiter of a multi-line string being skipped.
        for (offset, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if let delimiter = openString {
                if line.contains(delimiter) { openString = nil }
                continue
            }
            for delimiter in ["\"\"\"", "'''"] where line.components(separatedBy: delimiter).count == 2 {
                openString = delimiter  // Opened on this line and not closed on it.
            }
            if line.hasPrefix("[") {
                let name = line.drop(while: { $0 == "[" }).prefix(while: { $0 != "]" })
                table = TOMLKeyLocator.unquote(String(name))
                lines.append((table, nil, offset + 1))
            } else if let equals = line.firstIndex(of: "="), !line.hasPrefix("#") {
                let key = TOMLKeyLocator.unquote(String(line[..<equals]))
                lines.append((table, table.isEmpty ? key : table + "." + key, offset + 1))
            }
        }
    }

    func line(of key: String) -> Int {
        if let match = lines.first(where: { $0.key == key }) { return match.line }
        // An inline table (`fetch = { concurrency = 4 }`) or a table header holds the key.
        var parts = key.split(separator: ".").map(String.init)
        while parts.count > 1 {
            parts.removeLast()
            let prefix = parts.joined(separator: ".")
            if let match = lines.first(where: { $0.key == prefix || ($0.key == nil && $0.table == prefix) }) { return match.line }
        }
        return 1
    }

    private static func unquote(_ text: String) -> String {
        text.split(separator: ".").map {
            $0.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\"'"))
        }.joined(separator: ".")
    }
}
