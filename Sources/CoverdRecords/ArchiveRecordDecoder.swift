import CoverdModel

/// Reads the BlueLibrary app's `albums.bin`: an NSKeyedArchiver binary plist
/// whose root is an array of `Album` objects with the keys `album`, `artist`,
/// `year`, `genre` and `cover_url`.
///
/// The class name is accepted as `Album` or module-qualified (`App.Album`),
/// since Foundation on Linux records the Swift module name.
public struct ArchiveRecordDecoder: Sendable {
    public var validator: AlbumValidator

    public init(validator: AlbumValidator = AlbumValidator()) {
        self.validator = validator
    }

    public func decode(_ bytes: [UInt8], record: String) throws(RecordFileError) -> RecordContents {
        do {
            return try decodeArchive(try BinaryPropertyList(bytes), record: record)
        } catch {
            throw .invalidArchive(path: record, reason: error.reason)
        }
    }

    private func decodeArchive(_ plist: BinaryPropertyList, record: String) throws(BinaryPropertyList.FormatError) -> RecordContents {
        let archive = Archive(plist: plist)
        let top = try archive.dictionary(plist.topObject, what: "the archive")
        guard let objectsRef = try archive.member(top, "$objects"), case .array(let objects) = try plist.object(objectsRef) else {
            throw BinaryPropertyList.FormatError(reason: "no $objects table (not an NSKeyedArchiver archive)")
        }
        guard let topRef = try archive.member(top, "$top") else {
            throw BinaryPropertyList.FormatError(reason: "no $top entry")
        }
        let topEntries = try archive.dictionary(topRef, what: "$top")
        guard let rootRef = try archive.member(topEntries, "root") else {
            throw BinaryPropertyList.FormatError(reason: "no root object in $top")
        }
        let context = ArchiveObjects(archive: archive, objects: objects)
        let root = try context.resolveDictionary(rootRef, what: "the root object")
        let rootClass = try context.className(of: root)
        guard let listRef = try archive.member(root, "NS.objects"), case .array(let elements) = try plist.object(listRef) else {
            throw BinaryPropertyList.FormatError(reason: "the root object is \(rootClass ?? "unnamed"), not an array of albums")
        }
        var contents = RecordContents()
        for (offset, elementRef) in elements.enumerated() {
            let position = RecordPosition.entry(offset + 1)
            do {
                let element = try context.resolveDictionary(elementRef, what: position.description)
                let className = try context.className(of: element) ?? "an unnamed object"
                guard className == "Album" || className.hasSuffix(".Album") else {
                    throw AlbumFieldError.notAnObject(found: className)
                }
                let album = try validator.album(from: try context.fields(of: element), record: record, position: position)
                contents.albums.append(album)
            } catch let error as AlbumFieldError {
                contents.rejections.append(RecordRejection(record: record, position: position.description, error: error))
            } catch let error as BinaryPropertyList.FormatError {
                contents.rejections.append(
                    RecordRejection(record: record, position: position.description, error: .notAnObject(found: "a malformed object (\(error.reason))")))
            } catch {
                throw BinaryPropertyList.FormatError(reason: "\(error)")
            }
        }
        return contents
    }
}

/// Dictionary lookups by string key over a property list.
private struct Archive {
    let plist: BinaryPropertyList

    func dictionary(_ reference: Int, what: String) throws(BinaryPropertyList.FormatError) -> [(key: Int, value: Int)] {
        guard case .dictionary(let entries) = try plist.object(reference) else {
            throw BinaryPropertyList.FormatError(reason: "\(what) is not a dictionary")
        }
        return entries
    }

    func member(_ entries: [(key: Int, value: Int)], _ name: String) throws(BinaryPropertyList.FormatError) -> Int? {
        for entry in entries {
            if case .string(let key) = try plist.object(entry.key), key == name { return entry.value }
        }
        return nil
    }
}

/// The `$objects` table of a keyed archive: values are either inline or UIDs into it.
private struct ArchiveObjects {
    let archive: Archive
    let objects: [Int]

    /// Follows one UID, as NSKeyedArchiver stores every object by reference.
    func resolve(_ reference: Int) throws(BinaryPropertyList.FormatError) -> PropertyListObject {
        let value = try archive.plist.object(reference)
        guard case .uid(let index) = value else { return value }
        guard index < objects.count else { throw BinaryPropertyList.FormatError(reason: "UID \(index) outside $objects") }
        return try archive.plist.object(objects[index])
    }

    func resolveDictionary(_ reference: Int, what: String) throws(BinaryPropertyList.FormatError) -> [(key: Int, value: Int)] {
        guard case .dictionary(let entries) = try resolve(reference) else {
            throw BinaryPropertyList.FormatError(reason: "\(what) is not an archived object")
        }
        return entries
    }

    func className(of entries: [(key: Int, value: Int)]) throws(BinaryPropertyList.FormatError) -> String? {
        guard let classRef = try archive.member(entries, "$class") else { return nil }
        let classEntries = try resolveDictionary(classRef, what: "a class description")
        guard let nameRef = try archive.member(classEntries, "$classname"), case .string(let name) = try archive.plist.object(nameRef) else {
            return nil
        }
        return name
    }

    func fields(of entries: [(key: Int, value: Int)]) throws(BinaryPropertyList.FormatError) -> [String: RecordFieldValue] {
        var fields: [String: RecordFieldValue] = [:]
        for key in AlbumValidator.fieldNames {
            guard let reference = try archive.member(entries, key) else { continue }
            fields[key] = try fieldValue(try resolve(reference))
        }
        return fields
    }

    private func fieldValue(_ value: PropertyListObject) throws(BinaryPropertyList.FormatError) -> RecordFieldValue {
        switch value {
        case .string("$null"): return .null
        case .string(let text): return .string(text)
        case .integer(let number): return Int(exactly: number).map { .integer($0) } ?? .other("an integer out of range")
        case .null: return .null
        case .dictionary(let entries):
            // NSMutableString and friends archive as {"NS.string": "..."}.
            if let stringRef = try archive.member(entries, "NS.string"), case .string(let text) = try archive.plist.object(stringRef) {
                return .string(text)
            }
            return .other("an object")
        case .bool: return .other("a boolean")
        case .real: return .other("a number")
        case .data: return .other("data")
        case .date: return .other("a date")
        case .array: return .other("an array")
        case .uid: return .other("a reference")
        }
    }
}
