import CoverdBase
import CoverdModel

/// What one record file yielded: its valid albums in file order, and the
/// albums it rejected with their reasons.
public struct RecordContents: Sendable, Equatable {
    public var albums: [Album]
    public var rejections: [RecordRejection]

    public init(albums: [Album] = [], rejections: [RecordRejection] = []) {
        self.albums = albums
        self.rejections = rejections
    }
}

/// Reads the JSON forms of contract §3: one album object, an array of them,
/// or `{"albums": [...]}`.
public struct JSONRecordDecoder: Sendable {
    public var validator: AlbumValidator

    public init(validator: AlbumValidator = AlbumValidator()) {
        self.validator = validator
    }

    public func decode(_ bytes: [UInt8], record: String) throws(RecordFileError) -> RecordContents {
        let root: JSONNode
        do {
            root = try JSONParser(maxDepth: validator.limits.maxDepth).parse(bytes)
        } catch {
            throw .invalidJSON(path: record, error)
        }
        switch root.value {
        case .array(let elements):
            return decodeList(elements, record: record)
        case .object(let members):
            if let list = members["albums"], members["title"] == nil, members["album"] == nil {
                guard case .array(let elements) = list.value else {
                    throw .unexpectedShape(path: record, reason: "'albums' must be an array, found \(list.value.typeDescription)")
                }
                return decodeList(elements, record: record)
            }
            return decodeList([root], record: record, single: true)
        default:
            throw .unexpectedShape(
                path: record,
                reason: "expected an album object, an array of albums or {\"albums\": [...]}, found \(root.value.typeDescription)")
        }
    }

    private func decodeList(_ elements: [JSONNode], record: String, single: Bool = false) -> RecordContents {
        var contents = RecordContents()
        contents.albums.reserveCapacity(elements.count)
        for (offset, element) in elements.enumerated() {
            let position: RecordPosition = single ? .single(line: element.line) : .entry(offset + 1, line: element.line)
            do throws(AlbumFieldError) {
                guard case .object(let members) = element.value else {
                    throw AlbumFieldError.notAnObject(found: element.value.typeDescription)
                }
                let album = try validator.album(from: fields(of: members), record: record, position: position)
                contents.albums.append(album)
            } catch {
                contents.rejections.append(RecordRejection(record: record, position: position.description, error: error))
            }
        }
        return contents
    }


    private func fields(of members: [String: JSONNode]) -> [String: RecordFieldValue] {
        // Walked rather than looked up key by key: an album has a handful of members, and each lookup hashes.
        var fields: [String: RecordFieldValue] = [:]
        fields.reserveCapacity(min(members.count, 8))  // most albums have at most eight of the names
        for (key, node) in members where AlbumValidator.isFieldName(key) {
            fields[key] = fieldValue(node.value)
        }
        return fields
    }

    private func fieldValue(_ value: JSONValue) -> RecordFieldValue {
        switch value {
        case .string(let text): return .string(text)
        case .null: return .null
        case .number(let text):
            // Only a plain integer literal is an integer: 1992.0 and 1e3 are not years.
            if let number = Int(text) { return .integer(number) }
            let integral = !text.isEmpty && text.utf8.enumerated().allSatisfy { $1 >= 0x30 && $1 <= 0x39 || ($0 == 0 && $1 == 0x2D) }
            return .other(integral ? "an integer out of range" : "a non-integer number")
        default: return .other(value.typeDescription)
        }
    }
}
