/// A JSON value as read from a record file or a web service's answer.
///
/// Numbers keep their source text, so that `1992`, `1992.0` and `true` stay
/// distinguishable when a field must be "a string or an integer".
public indirect enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case number(String)
    case string(String)
    case array([JSONNode])
    case object([String: JSONNode])

    /// The JSON type name, for error messages ("expected a string, found an array").
    public var typeDescription: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}

/// A JSON value with the 1-based line where it starts, so that a rejected
/// album can be pointed at in its file.
public struct JSONNode: Sendable, Equatable {
    public var value: JSONValue
    public var line: Int

    public init(_ value: JSONValue, line: Int) {
        self.value = value
        self.line = line
    }
}

/// Why a JSON text could not be parsed, with the position of the problem.
public struct JSONSyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public var line: Int
    public var column: Int

    public var description: String { "\(message) at line \(line), column \(column)" }
}
