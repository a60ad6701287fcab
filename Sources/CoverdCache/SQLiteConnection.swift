import CSQLite
#if canImport(Glibc)
import Glibc
#endif

/// A failed SQLite call: what was being done, on which database, and SQLite's message.
public struct IndexError: Error, Sendable, Equatable, CustomStringConvertible {
    public var operation: String
    public var path: String
    public var code: Int32
    public var message: String
    /// The errno of the system call that failed under SQLite, when there was one.
    public var systemErrno: Int32?

    public var description: String { "index \(path): \(operation) failed: \(message) (SQLite code \(code))" }

    /// SQLITE_FULL, or a write that failed with ENOSPC or EDQUOT (a quota is a full disk for this user).
    public var isOutOfSpace: Bool { code & 0xFF == 13 || systemErrno == ENOSPC || systemErrno == EDQUOT }
}

/// Owns one `sqlite3*` and closes it in `deinit`. Not thread-safe: callers
/// confine it (see `CoverIndex`, which keeps it behind a mutex).
final class SQLiteConnection {
    let path: String
    private let handle: OpaquePointer

    /// With `immutable`, the file is opened read-only as one nothing will
    /// change (SQLite's `immutable=1`): no locks, no WAL, no shared-memory
    /// file, so nothing needs to be created beside it. Only for a file no
    /// writer has open (see `CoverIndex.openForReading`).
    init(path: String, readOnly: Bool, immutable: Bool = false) throws(IndexError) {
        var db: OpaquePointer?
        var flags = readOnly || immutable ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
        var name = path
        if immutable {
            flags |= SQLITE_OPEN_URI
            name = SQLiteConnection.immutableURI(path)
        }
        let code = sqlite3_open_v2(name, &db, flags | SQLITE_OPEN_NOMUTEX, nil)
        guard code == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
            let systemErrno = db.map { sqlite3_system_errno($0) }.flatMap { $0 == 0 ? nil : $0 }
            sqlite3_close_v2(db)
            throw IndexError(operation: "open", path: path, code: code, message: message, systemErrno: systemErrno)
        }
        self.path = path
        self.handle = db
        sqlite3_busy_timeout(db, 5000)
    }

    deinit {
        sqlite3_close_v2(handle)
    }

    /// `file:<path>?immutable=1`, with the three characters a URI's path may
    /// not hold as they are escaped; an absolute path gets an empty authority
    /// (`file:///…`), so that one starting `//` is not read as a host.
    static func immutableURI(_ path: String) -> String {
        var bytes = Array((path.hasPrefix("/") ? "file://" : "file:").utf8)
        for byte in path.utf8 {
            if byte == UInt8(ascii: "%") || byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#") {
                bytes += Array("%\(String(byte, radix: 16, uppercase: true))".utf8)  // All three are above 0x0F.
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes + Array("?immutable=1".utf8), as: UTF8.self)
    }

    func execute(_ sql: String) throws(IndexError) {
        var message: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(handle, sql, nil, nil, &message)
        guard code == SQLITE_OK else {
            let text = message.map { String(cString: $0) } ?? lastMessage
            sqlite3_free(message)
            throw IndexError(operation: String(sql.prefix(40)), path: path, code: code, message: text, systemErrno: systemErrno)
        }
    }

    func prepare(_ sql: String) throws(IndexError) -> SQLiteStatement {
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        guard code == SQLITE_OK, let statement else {
            throw IndexError(operation: "prepare \(sql.prefix(40))", path: path, code: code, message: lastMessage, systemErrno: systemErrno)
        }
        return SQLiteStatement(connection: self, handle: statement)
    }

    var lastMessage: String { String(cString: sqlite3_errmsg(handle)) }

    /// The extended result code of the last failed call (`SQLITE_IOERR_SHMSIZE` where `IndexError.code` says `SQLITE_IOERR`).
    var lastExtendedCode: Int32 { sqlite3_extended_errcode(handle) }

    var systemErrno: Int32? {
        let code = sqlite3_system_errno(handle)
        return code == 0 ? nil : code
    }
}

/// One prepared statement; keeps its connection alive and finalizes in `deinit`.
final class SQLiteStatement {
    private let connection: SQLiteConnection
    private let handle: OpaquePointer

    fileprivate init(connection: SQLiteConnection, handle: OpaquePointer) {
        self.connection = connection
        self.handle = handle
    }

    deinit {
        sqlite3_finalize(handle)
    }

    func bind(_ values: [SQLiteValue]) {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            switch value {
            case .null: sqlite3_bind_null(handle, index)
            case .integer(let number): sqlite3_bind_int64(handle, index, number)
            case .real(let number): sqlite3_bind_double(handle, index, number)
            case .text(let text): coverd_sqlite3_bind_text_copy(handle, index, text, -1)
            }
        }
    }

    /// Runs a statement that returns no rows.
    func run(_ values: [SQLiteValue]) throws(IndexError) {
        bind(values)
        let code = sqlite3_step(handle)
        guard code == SQLITE_DONE || code == SQLITE_ROW else {
            throw IndexError(operation: "step", path: connection.path, code: code, message: connection.lastMessage, systemErrno: connection.systemErrno)
        }
    }

    /// Calls `body` for each row of a query.
    func query(_ values: [SQLiteValue] = [], _ body: (SQLiteRow) -> Void) throws(IndexError) {
        bind(values)
        while true {
            let code = sqlite3_step(handle)
            if code == SQLITE_DONE { return }
            guard code == SQLITE_ROW else {
                throw IndexError(operation: "query", path: connection.path, code: code, message: connection.lastMessage, systemErrno: connection.systemErrno)
            }
            body(SQLiteRow(handle: handle))
        }
    }
}

/// A value bound to or read from a statement.
enum SQLiteValue {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
}

/// Column access for the current row; valid only inside `SQLiteStatement.query`'s body.
struct SQLiteRow {
    fileprivate let handle: OpaquePointer

    func text(_ column: Int32) -> String? {
        guard sqlite3_column_type(handle, column) != SQLITE_NULL, let pointer = sqlite3_column_text(handle, column) else {
            return nil
        }
        return String(cString: pointer)
    }

    func integer(_ column: Int32) -> Int64? {
        sqlite3_column_type(handle, column) == SQLITE_NULL ? nil : sqlite3_column_int64(handle, column)
    }

    func real(_ column: Int32) -> Double? {
        sqlite3_column_type(handle, column) == SQLITE_NULL ? nil : sqlite3_column_double(handle, column)
    }
}
