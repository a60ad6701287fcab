import CoverdBase
import CoverdModel

/// MusicBrainz's JSON answers, read as its API documents them. Anything else
/// (not JSON, too deep, the wrong types) is an error that says what was wrong.
/// `package`: the lookup fuzzer feeds it any bytes.
package enum MusicBrainzAnswer {
    /// An answer that is not what the API documents.
    package struct Malformed: Error, Sendable, CustomStringConvertible {
        package var reason: String
        package var description: String { reason }
    }

    /// One release group a search found.
    package struct Candidate: Sendable, Equatable {
        package var id: MusicBrainzID
        package var score: Int
        package var title: String
        /// The whole artist credit: each name followed by its join phrase.
        package var artist: String
    }

    /// What a search answered: its usable results, and why others were passed over.
    package struct Search: Sendable, Equatable {
        package var candidates: [Candidate]
        package var skipped: [String]
    }

    /// Deep enough for every documented answer, shallow enough that a hostile one cannot recurse far.
    static let maxDepth = 32

    /// `/ws/2/release/<id>?inc=release-groups`: the id of the release's group.
    package static func releaseGroup(ofRelease bytes: [UInt8]) throws(Malformed) -> MusicBrainzID {
        let root = try object(try parse(bytes), "the release")
        guard let group = root["release-group"] else { throw Malformed(reason: "the release has no 'release-group'") }
        let members = try object(group.value, "'release-group'")
        return try identifier(members["id"], "the release group's 'id'")
    }

    /// `/ws/2/release-group/?query=…`: the groups found, with their scores.
    package static func releaseGroupSearch(_ bytes: [UInt8]) throws(Malformed) -> Search {
        let root = try object(try parse(bytes), "the search answer")
        guard let list = root["release-groups"] else { throw Malformed(reason: "the search answer has no 'release-groups'") }
        guard case .array(let elements) = list.value else {
            throw Malformed(reason: "'release-groups' is \(list.value.typeDescription), not an array")
        }
        var search = Search(candidates: [], skipped: [])
        for (offset, element) in elements.enumerated() {
            do throws(Malformed) {
                search.candidates.append(try candidate(element.value))
            } catch {
                search.skipped.append("result \(offset + 1): \(error.reason)")
            }
        }
        return search
    }

    private static func candidate(_ value: JSONValue) throws(Malformed) -> Candidate {
        let members = try object(value, "the result")
        let id = try identifier(members["id"], "'id'")
        guard case .number(let text)? = members["score"]?.value, let score = Int(text) else {
            throw Malformed(reason: "'score' is \(members["score"]?.value.typeDescription ?? "missing"), not an integer")
        }
        let title = try string(members["title"], "'title'")
        guard case .array(let credits)? = members["artist-credit"]?.value else {
            throw Malformed(reason: "'artist-credit' is \(members["artist-credit"]?.value.typeDescription ?? "missing"), not an array")
        }
        var parts: [(name: String, joinPhrase: String)] = []
        for credit in credits {
            let entry = try object(credit.value, "an 'artist-credit' entry")
            let joinPhrase = entry["joinphrase"].map { node -> String in if case .string(let text) = node.value { text } else { "" } } ?? ""
            parts.append((try string(entry["name"], "an artist credit's 'name'"), joinPhrase))
        }
        return Candidate(id: id, score: score, title: title, artist: NameMatching.credit(parts))
    }

    private static func parse(_ bytes: [UInt8]) throws(Malformed) -> JSONValue {
        do {
            return try JSONParser(maxDepth: maxDepth).parse(bytes).value
        } catch {
            throw Malformed(reason: "the answer is not JSON (\(error))")
        }
    }

    private static func object(_ value: JSONValue, _ what: String) throws(Malformed) -> [String: JSONNode] {
        guard case .object(let members) = value else { throw Malformed(reason: "\(what) is \(value.typeDescription), not an object") }
        return members
    }

    private static func string(_ node: JSONNode?, _ what: String) throws(Malformed) -> String {
        guard case .string(let text)? = node?.value else {
            throw Malformed(reason: "\(what) is \(node?.value.typeDescription ?? "missing"), not a string")
        }
        return text
    }

    private static func identifier(_ node: JSONNode?, _ what: String) throws(Malformed) -> MusicBrainzID {
        let text = try string(node, what)
        guard let id = MusicBrainzID(text) else { throw Malformed(reason: "\(what) \"\(text.prefix(40))\" is not a MusicBrainz id") }
        return id
    }
}
