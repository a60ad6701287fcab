import CoverdBase
import CoverdModel
import CoverdSync

/// The control channel's wire format: line-delimited JSON over a Unix
/// stream socket. A client sends one request line; the daemon answers with
/// one or more response lines. Unknown keys are ignored, so either side may
/// grow; an unknown request is answered with an error.
///
/// Requests:
///   {"request": "refresh", "ids": ["id", ...], "all": false, "erase": false}
///   {"request": "follow"}
/// Responses:
///   {"refreshed": N}                       then the connection closes
///   {"unknown": ["id", ...]}               then the connection closes
///   {"progress": {"albums": N, "cached": N, "pending": N, "failed": N,
///     "outdated": N, "awaiting_lookup": N}, "line": "..."}   for follow, repeated
///   {"stopping": true}                     the daemon stops; the connection closes
///   {"error": "..."}                       then the connection closes
///
/// Every line is at most `maxLineBytes` long, newline excluded: a request
/// naming thousands of ids fits, and nothing reads without bound.
public enum ControlProtocol {
    public static let maxLineBytes = 1 << 20
    /// Nesting deeper than a response's two levels (and a little room) is refused before recursing.
    static let maxDepth = 4

    // MARK: Requests

    public static func encode(_ request: ControlRequest) -> [UInt8] {
        switch request {
        case .follow:
            return Array("{\"request\": \"follow\"}\n".utf8)
        case .refresh(let refresh):
            var out = Array("{\"request\": \"refresh\", \"ids\": [".utf8)
            for (index, id) in refresh.ids.enumerated() {
                if index > 0 { out += ", ".utf8 }
                JSONText.append(id.rawValue, to: &out)
            }
            out += "], \"all\": \(refresh.all), \"erase\": \(refresh.mark == .erase)}\n".utf8
            return out
        }
    }

    public static func decodeRequest(_ line: [UInt8]) throws(ProtocolError) -> ControlRequest {
        let object = try topObject(line)
        guard let kind = object["request"] else { throw ProtocolError("no \"request\" key") }
        guard case .string(let name) = kind.value else { throw ProtocolError("\"request\" is \(kind.value.typeDescription), not a string") }
        switch name {
        case "follow":
            return .follow
        case "refresh":
            let ids = try idList(object["ids"], key: "ids") ?? []
            let all = try flag(object["all"], key: "all")
            let erase = try flag(object["erase"], key: "erase")
            guard all || !ids.isEmpty else { throw ProtocolError("a refresh names ids or asks for all") }
            return .refresh(RefreshRequest(ids: ids, all: all, mark: erase ? .erase : .revalidate))
        default:
            throw ProtocolError("unknown request \(JSONText.quote(String(name.prefix(64))))")
        }
    }

    // MARK: Responses

    public static func encode(_ response: ControlResponse) -> [UInt8] {
        var out: [UInt8]
        switch response {
        case .refreshed(let count):
            out = Array("{\"refreshed\": \(count)}".utf8)
        case .unknown(let ids):
            out = Array("{\"unknown\": [".utf8)
            for (index, id) in ids.enumerated() {
                if index > 0 { out += ", ".utf8 }
                JSONText.append(id.rawValue, to: &out)
            }
            out += "]}".utf8
        case .progress(let update):
            out = Array("{\"progress\": \(update.summaryJSON), \"line\": ".utf8)
            JSONText.append(update.line, to: &out)
            out.append(UInt8(ascii: "}"))
        case .stopping:
            out = Array("{\"stopping\": true}".utf8)
        case .error(let message):
            out = Array("{\"error\": ".utf8)
            JSONText.append(message, to: &out)
            out.append(UInt8(ascii: "}"))
        }
        out.append(0x0A)
        return out
    }

    public static func decodeResponse(_ line: [UInt8]) throws(ProtocolError) -> ControlResponse {
        let object = try topObject(line)
        if let node = object["refreshed"] { return .refreshed(count: try count(node, key: "refreshed")) }
        if let node = object["unknown"] { return .unknown(try idList(node, key: "unknown") ?? []) }
        if let node = object["error"] {
            guard case .string(let message) = node.value else { throw ProtocolError("\"error\" is not a string") }
            return .error(message)
        }
        if object["stopping"] != nil { return .stopping }
        if let node = object["progress"] {
            guard case .object(let counts) = node.value else { throw ProtocolError("\"progress\" is not an object") }
            guard let lineNode = object["line"], case .string(let text) = lineNode.value else { throw ProtocolError("a progress without its line") }
            func value(_ key: String) throws(ProtocolError) -> Int {
                guard let node = counts[key] else { return 0 }
                return try count(node, key: key)
            }
            let summary = SyncSummary(
                albums: try value("albums"), cached: try value("cached"), pending: try value("pending"), failed: try value("failed"),
                awaitingLookup: try value("awaiting_lookup"), outdated: try value("outdated"))
            return .progress(FollowUpdate(summary: summary, line: text))
        }
        throw ProtocolError("a response of no known kind")
    }

    // MARK: Reading

    private static func topObject(_ line: [UInt8]) throws(ProtocolError) -> [String: JSONNode] {
        guard line.count <= maxLineBytes else { throw ProtocolError("a line over \(maxLineBytes) bytes") }
        let root: JSONNode
        do {
            root = try JSONParser(maxDepth: maxDepth).parse(line)
        } catch {
            throw ProtocolError("not JSON: \(error.message) at column \(error.column)")
        }
        guard case .object(let object) = root.value else { throw ProtocolError("a line must be an object, not \(root.value.typeDescription)") }
        return object
    }

    private static func idList(_ node: JSONNode?, key: String) throws(ProtocolError) -> [AlbumID]? {
        guard let node else { return nil }
        guard case .array(let items) = node.value else { throw ProtocolError("\"\(key)\" is \(node.value.typeDescription), not an array") }
        var ids: [AlbumID] = []
        ids.reserveCapacity(items.count)
        for item in items {
            guard case .string(let text) = item.value else { throw ProtocolError("an id in \"\(key)\" is \(item.value.typeDescription)") }
            guard let id = try? AlbumID(validating: text) else { throw ProtocolError("\(JSONText.quote(String(text.prefix(64)))) is not an album id") }
            ids.append(id)
        }
        return ids
    }

    private static func flag(_ node: JSONNode?, key: String) throws(ProtocolError) -> Bool {
        guard let node else { return false }
        guard case .bool(let value) = node.value else { throw ProtocolError("\"\(key)\" is \(node.value.typeDescription), not a boolean") }
        return value
    }

    private static func count(_ node: JSONNode, key: String) throws(ProtocolError) -> Int {
        guard case .number(let text) = node.value, let value = Int(text), value >= 0 else {
            throw ProtocolError("\"\(key)\" is not a count")
        }
        return value
    }
}
