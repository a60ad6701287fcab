@testable import CoverdBase
@testable import CoverdCache
@testable import CoverdModel
import CoverdTestSupport
import Foundation
import Testing

@Suite("Index schema")
struct IndexSchemaTests {
    let directory = TestDirectory()

    /// An index as coverd before lookups wrote it: schema version 1.
    func makeVersion1Index() throws -> String {
        let path = directory.path + "/" + CoverIndex.fileName
        let db = try SQLiteConnection(path: path, readOnly: false)
        try db.execute("""
            CREATE TABLE albums (
                id TEXT PRIMARY KEY NOT NULL, title TEXT NOT NULL, artist TEXT NOT NULL, year TEXT, genre TEXT,
                cover_url TEXT NOT NULL, record TEXT NOT NULL,
                state TEXT NOT NULL CHECK (state IN ('pending', 'cached', 'failed')), error TEXT,
                attempts INTEGER NOT NULL DEFAULT 0, next_retry REAL, bytes INTEGER, file_mtime INTEGER,
                http_status INTEGER, updated_at REAL NOT NULL
            ) WITHOUT ROWID;
            INSERT INTO albums VALUES ('a', 'T', 'A', '1999', NULL, 'http://h/a.png', '/r/a.json', 'cached', NULL, 0, NULL, 10, 5, 200, 1.5);
            INSERT INTO albums VALUES ('b', 'U', 'B', NULL, 'Pop', 'http://h/b.png', '/r/a.json', 'failed', 'HTTP 404', 2, 99.0, NULL, NULL, 404, 2.5);
            PRAGMA user_version = 1;
            """)
        return path
    }

    @Test("Given a version 1 index, when status reads it before any daemon upgraded it, then every row reads, each from its record's URL")
    func version1ReadAsItIs() throws {
        _ = try makeVersion1Index()

        let rows = try CoverIndex(cacheDirectory: directory.path, readOnly: true).rows()

        #expect(rows.map(\.id.rawValue) == ["a", "b"])
        #expect(rows.map(\.source) == [.url, .url])
        #expect(rows.map(\.resolvedURL) == ["http://h/a.png", nil])
        #expect(rows[1].error == "HTTP 404" && rows[1].genre == "Pop" && rows[0].bytes == 10)
    }

    @Test("Given a version 1 index, when the daemon opens it, then it becomes the current version with every row kept and room for albums without a URL")
    func version1Migrated() throws {
        _ = try makeVersion1Index()

        // When
        let index = try CoverIndex(cacheDirectory: directory.path)

        // Then
        let rows = try index.rows()
        #expect(rows.map(\.id.rawValue) == ["a", "b"])
        #expect(rows[0].state == .cached && rows[0].resolvedURL == "http://h/a.png" && rows[0].fileMTime == 5 && rows[0].year == "1999")
        #expect(rows[1].state == .failed && rows[1].nextRetry == Date(timeIntervalSince1970: 99) && rows[1].attempts == 2)
        var lookedUp = IndexRow(
            id: try AlbumID(validating: "c"), title: "V", artist: "C", record: "/r/c.json", state: .cached,
            updatedAt: Date(timeIntervalSince1970: 1_700_000_000.5))
        lookedUp.releaseID = "0b3f0a5c-1e2d-4c3b-8a9f-00000000000a"
        lookedUp.source = .search
        lookedUp.foundReleaseGroupID = "0b3f0a5c-1e2d-4c3b-8a9f-00000000000b"
        lookedUp.resolvedURL = "https://caa.example/release-group/0b3f0a5c-1e2d-4c3b-8a9f-00000000000b/front"
        try index.apply([.upsert(lookedUp)])
        #expect(try index.rows().last == lookedUp)
        let reopened = try SQLiteConnection(path: index.path, readOnly: true)
        #expect(try IndexSchema.version(of: reopened) == IndexSchema.version)
        #expect(try index.rows().allSatisfy { $0.removedAt == nil })
    }

    @Test("Given an index from a newer coverd, when the daemon opens it, then it refuses, saying so, and changes nothing")
    func newerIndexRefused() throws {
        let path = try makeVersion1Index()
        try SQLiteConnection(path: path, readOnly: false).execute("PRAGMA user_version = 9")

        #expect {
            try CoverIndex(cacheDirectory: directory.path)
        } throws: { error in
            (error as? IndexError)?.message.contains("newer coverd") == true
        }
        #expect(try IndexSchema.version(of: SQLiteConnection(path: path, readOnly: true)) == 9)
    }

    /// An index as coverd with lookups but before remove and undo wrote it: schema version 2.
    func makeVersion2Index() throws -> String {
        let path = directory.path + "/" + CoverIndex.fileName
        let db = try SQLiteConnection(path: path, readOnly: false)
        try db.execute("""
            CREATE TABLE albums (
                id TEXT PRIMARY KEY NOT NULL, title TEXT NOT NULL, artist TEXT NOT NULL, year TEXT, genre TEXT,
                cover_url TEXT, mbid TEXT, release_group_mbid TEXT, record TEXT NOT NULL,
                state TEXT NOT NULL CHECK (state IN ('pending', 'cached', 'failed')), error TEXT,
                attempts INTEGER NOT NULL DEFAULT 0, next_retry REAL, bytes INTEGER, file_mtime INTEGER,
                http_status INTEGER, source TEXT, found_mbid TEXT, found_release_group_mbid TEXT, resolved_url TEXT,
                updated_at REAL NOT NULL
            ) WITHOUT ROWID;
            INSERT INTO albums VALUES ('a', 'T', 'A', NULL, NULL, NULL, '0b3f0a5c-1e2d-4c3b-8a9f-00000000000a', NULL, '/r/a.json',
                'cached', NULL, 0, NULL, 10, 5, 200, 'release', '0b3f0a5c-1e2d-4c3b-8a9f-00000000000a', NULL, 'http://caa/a', 1.5);
            INSERT INTO albums VALUES ('b', 'U', 'B', NULL, NULL, 'http://h/b.png', NULL, NULL, '/r/b.json',
                'failed', 'HTTP 404', 2, 99.0, NULL, NULL, 404, 'url', NULL, NULL, NULL, 2.5);
            PRAGMA user_version = 2;
            """)
        return path
    }

    @Test("Given a version 2 index, when status reads it before any daemon upgraded it, then every row reads, none removed")
    func version2ReadAsItIs() throws {
        _ = try makeVersion2Index()

        let rows = try CoverIndex(cacheDirectory: directory.path, readOnly: true).rows()

        #expect(rows.map(\.id.rawValue) == ["a", "b"])
        #expect(rows.map(\.source) == [.release, .url])
        #expect(rows[0].resolvedURL == "http://caa/a" && rows[0].foundReleaseID == "0b3f0a5c-1e2d-4c3b-8a9f-00000000000a")
        #expect(rows.allSatisfy { $0.removedAt == nil })
    }

    @Test("Given a version 2 index, when the daemon opens it, then a removed_at column is added, every row kept, and removals stored")
    func version2Migrated() throws {
        _ = try makeVersion2Index()

        // When
        let index = try CoverIndex(cacheDirectory: directory.path)

        // Then
        var rows = try index.rows()
        #expect(rows.map(\.id.rawValue) == ["a", "b"])
        #expect(rows[0].state == .cached && rows[0].resolvedURL == "http://caa/a" && rows[0].fileMTime == 5)
        #expect(rows[1].state == .failed && rows[1].error == "HTTP 404" && rows[1].attempts == 2)
        rows[0].removedAt = Date(timeIntervalSince1970: 1_700_000_000)
        try index.apply([.upsert(rows[0])])
        #expect(try index.rows().first?.removedAt == Date(timeIntervalSince1970: 1_700_000_000))
        #expect(try IndexSchema.version(of: SQLiteConnection(path: index.path, readOnly: true)) == IndexSchema.version)
    }
}
