@testable import CoverdModel
@testable import CoverdRecords
import CoverdTestSupport
import Testing

@Suite("Record catalog")
struct RecordCatalogTests {
    func album(_ id: String, url: String = "http://h/a.png", record: String, title: String = "T") throws -> Album {
        Album(id: try AlbumID(validating: id), title: title, artist: "A", coverURL: try CoverURL(validating: url), record: record)
    }

    @Test("Given a new file, when added, then its albums are upserted")
    func addFile() throws {
        var catalog = RecordCatalog()
        let change = catalog.update(path: "/r/a.json", albums: [try album("x", record: "/r/a.json"), try album("y", record: "/r/a.json")])
        #expect(change.upserted.map(\.id.rawValue) == ["x", "y"])
        #expect(change.removed.isEmpty)
        #expect(catalog.albumCount == 2)
    }

    @Test("Given the same id in two files, when both load, then the first path wins with a warning, whatever the order")
    func duplicatesResolveDeterministically() throws {
        for order in [["/r/a.json", "/r/b.json"], ["/r/b.json", "/r/a.json"]] {
            var catalog = RecordCatalog()
            var duplicates: [DuplicateAlbum] = []
            for path in order {
                duplicates += catalog.update(path: path, albums: [try album("x", record: path, title: path)]).duplicates
            }
            #expect(catalog.album(try AlbumID(validating: "x"))?.record == "/r/a.json")
            #expect(duplicates.count == 1)
            #expect(duplicates.first?.kept.hasPrefix("/r/a.json") == true)
        }
    }

    @Test("Given the same id at different places of two files, when both load in either order, then the warning names each place")
    func duplicateWarningNamesBothPlaces() throws {
        for order in [["/r/a.json", "/r/b.json"], ["/r/b.json", "/r/a.json"]] {
            // Given: x is the second album of a.json and the third of b.json
            var catalog = RecordCatalog()
            var duplicates: [DuplicateAlbum] = []
            for path in order {
                let entry = path == "/r/a.json" ? 2 : 3
                let x = Album(
                    id: try AlbumID(validating: "x"), title: "T", artist: "A", coverURL: try CoverURL(validating: "http://h/a.png"),
                    record: path, position: .entry(entry, line: entry * 10))
                let filler = Album(
                    id: try AlbumID(validating: "f\(entry)"), title: "T", artist: "A", coverURL: try CoverURL(validating: "http://h/a.png"),
                    record: path, position: .entry(1, line: 1))
                // When
                duplicates += catalog.update(path: path, albums: [filler, x]).duplicates
            }
            // Then
            #expect(duplicates == [DuplicateAlbum(
                id: try AlbumID(validating: "x"), kept: "/r/a.json: album 2 (line 20)", ignored: "/r/b.json: album 3 (line 30)")])
        }
    }

    @Test("Given a large file sharing ids with fifty small ones that sort first, when each small one is removed, then the large file is tabled once")
    func largeFileTabledOnceForManyRemovals() throws {
        // Given: /r/z.json holds 1,000 albums; /r/a/NN.json each hold one of its ids
        var catalog = RecordCatalog()
        let large = try (0..<1000).map { try album("id\($0)", record: "/r/z.json", title: "large") }
        _ = catalog.update(path: "/r/z.json", albums: large)
        for n in 0..<50 {
            let path = "/r/a/\(n).json"
            _ = catalog.update(path: path, albums: [try album("id\(n)", record: path, title: "small")])
        }
        #expect(catalog.filesTabled == 0)  // Adding a holder in front needs no table.
        #expect(catalog.album(try AlbumID(validating: "id7"))?.title == "small")
        // When
        var upserted: [Album] = []
        for n in 0..<50 { upserted += catalog.remove(path: "/r/a/\(n).json").upserted }
        // Then: the large file's albums take over, from one table of it
        #expect(upserted.map(\.title) == Array(repeating: "large", count: 50))
        #expect(catalog.filesTabled == 1)
        #expect(catalog.inconsistencies.isEmpty)
        // And when the large file changes, its table goes with the change
        _ = catalog.update(path: "/r/z.json", albums: Array(large.dropLast()))
        _ = catalog.update(path: "/r/a/1.json", albums: [try album("id1", record: "/r/a/1.json", title: "small")])
        _ = catalog.remove(path: "/r/a/1.json")
        #expect(catalog.filesTabled == 2)
        #expect(catalog.album(try AlbumID(validating: "id1"))?.record == "/r/z.json")
        #expect(catalog.album(try AlbumID(validating: "id999")) == nil)
    }

    @Test("Given a duplicate winner deleted, when removed, then the other file's album takes over without a removal")
    func loserTakesOver() throws {
        var catalog = RecordCatalog()
        _ = catalog.update(path: "/r/a.json", albums: [try album("x", record: "/r/a.json")])
        _ = catalog.update(path: "/r/b.json", albums: [try album("x", record: "/r/b.json")])
        let change = catalog.remove(path: "/r/a.json")
        #expect(change.removed.isEmpty)
        #expect(change.upserted.map(\.record) == ["/r/b.json"])
    }

    @Test("Given a file rewritten without one album, when updated, then that album is removed")
    func albumDropped() throws {
        var catalog = RecordCatalog()
        _ = catalog.update(path: "/r/a.json", albums: [try album("x", record: "/r/a.json"), try album("y", record: "/r/a.json")])
        let change = catalog.update(path: "/r/a.json", albums: [try album("x", record: "/r/a.json")])
        #expect(change.removed.map(\.id.rawValue) == ["y"])
        #expect(change.upserted.isEmpty)
    }

    @Test("Given a rename folded into one change, when merged, then the album is only moved")
    func renameIsNetMove() throws {
        var catalog = RecordCatalog()
        _ = catalog.update(path: "/r/a.json", albums: [try album("x", record: "/r/a.json")])
        var change = catalog.remove(path: "/r/a.json")
        change.merge(catalog.update(path: "/r/b.json", albums: [try album("x", record: "/r/b.json")]))
        #expect(change.removed.isEmpty)
        #expect(change.upserted.map(\.record) == ["/r/b.json"])
    }

    @Test("Given an album removed and added back unchanged in one batch, when merged, then nothing changed")
    func removeAndRestoreIsNoChange() throws {
        var catalog = RecordCatalog()
        _ = catalog.update(path: "/r/a.json", albums: [try album("x", record: "/r/a.json")])
        var change = catalog.remove(path: "/r/a.json")
        change.merge(catalog.update(path: "/r/a.json", albums: [try album("x", record: "/r/a.json")]))
        #expect(change.isEmpty)
    }

    @Test("Given the same id twice in one file, when loaded, then the first entry wins with a warning")
    func duplicateWithinFile() throws {
        var catalog = RecordCatalog()
        let change = catalog.update(path: "/r/a.json", albums: [try album("x", record: "/r/a.json", title: "first"), try album("x", record: "/r/a.json", title: "second")])
        #expect(change.upserted.map(\.title) == ["first"])
        #expect(change.duplicates.count == 1)
    }

    @Test("Given a directory removed, when forgotten, then every album under it goes")
    func removeDirectory() throws {
        var catalog = RecordCatalog()
        _ = catalog.update(path: "/r/sub/a.json", albums: [try album("x", record: "/r/sub/a.json")])
        _ = catalog.update(path: "/r/subway.json", albums: [try album("y", record: "/r/subway.json")])
        let change = catalog.remove(under: "/r/sub")
        #expect(change.removed.map(\.id.rawValue) == ["x"])
        #expect(catalog.albumCount == 1)
    }

    @Test("Given a directory whose two files and a file outside it hold one id, when the directory is removed, then the outside file's album takes over, tabled once")
    func removeDirectoryHandsOverOnce() throws {
        // Given: x in /r/d/a.json (the winner), /r/d/c.json and /r/z.json
        var catalog = RecordCatalog()
        for path in ["/r/z.json", "/r/d/c.json", "/r/d/a.json"] {
            _ = catalog.update(path: path, albums: [try album("x", record: path, title: path)])
        }
        #expect(catalog.album(try AlbumID(validating: "x"))?.record == "/r/d/a.json")
        // When
        let change = catalog.remove(under: "/r/d")
        // Then: z.json's album, looked up once (a.json, the first holder, goes last)
        #expect(change.upserted.map(\.record) == ["/r/z.json"])
        #expect(change.removed.isEmpty)
        #expect(catalog.filesTabled == 1)
        #expect(catalog.inconsistencies.isEmpty)
        // And when the watcher's batch ends, the table goes
        catalog.releaseTables()
        #expect(catalog.inconsistencies.isEmpty)
    }

    /// A random album of `path`: few ids, URLs and titles, so that repeats
    /// within and across files are common; `entry` gives it a place that
    /// the duplicate warnings name.
    func randomAlbum(in path: String, entry: Int, using generator: inout SplitMix64) throws -> Album {
        Album(
            id: try AlbumID(validating: "id\(Int.random(in: 0..<6, using: &generator))"), title: "\(Int.random(in: 0..<2, using: &generator))",
            artist: "A", coverURL: try CoverURL(validating: "http://h/\(Int.random(in: 0..<2, using: &generator)).png"), record: path,
            position: .entry(entry))
    }

    static let randomPaths = ["/r/a.json", "/r/b.json", "/r/c.json", "/r/d/e.json"]

    @Test("Given random files with ids repeated within and across them, when a file is new, then its changes equal those of a known file")
    func newFileShortcutMatchesTheGeneralRules() throws {
        // Given: two catalogs fed the same updates; in the second, every file
        // is made known (empty) first, so its albums take the general path
        for seed in 0..<200 as Range<UInt64> {
            var generator = SplitMix64(seed: seed)  // A failure names its seed, and replays.
            var shortcut = RecordCatalog()
            var general = RecordCatalog()
            for _ in 0..<Int.random(in: 1...12, using: &generator) {
                let path = Self.randomPaths.randomElement(using: &generator) ?? Self.randomPaths[0]
                // When
                let expected: CatalogChange
                let change: CatalogChange
                let removal = Int.random(in: 0..<5, using: &generator) == 0
                if removal {
                    change = shortcut.remove(path: path)
                    expected = general.remove(path: path)
                } else {
                    let albums = try (0..<Int.random(in: 0...8, using: &generator)).map { try randomAlbum(in: path, entry: $0 + 1, using: &generator) }
                    if !general.contains(path: path) { _ = general.update(path: path, albums: []) }
                    change = shortcut.update(path: path, albums: albums)
                    expected = general.update(path: path, albums: albums)
                }
                // Then: the same changes in the same order (a removal's too: it goes in file order)
                let order: ([Album]) -> [String] = { $0.map { "\($0.id) \($0.record) \($0.position) \($0.title) \($0.coverURL?.string ?? "")" } }
                #expect(change == expected, "seed \(seed)")
                #expect(order(change.upserted) == order(expected.upserted), "seed \(seed), removal \(removal)")
                #expect(order(change.removed) == order(expected.removed), "seed \(seed), removal \(removal)")
                #expect(change.duplicates == expected.duplicates, "seed \(seed)")
                #expect(order(shortcut.albums.sorted { $0.id < $1.id }) == order(general.albums.sorted { $0.id < $1.id }), "seed \(seed)")
            }
        }
    }

    @Test("Given a batch of updates and removals, when each is recorded into one change, then it equals merging each file's change")
    func recordingIntoAChangeEqualsMerging() throws {
        for seed in 0..<200 as Range<UInt64> {
            var generator = SplitMix64(seed: seed)
            for firstScan in [true, false] {
                // Given: two catalogs with the same files, unless this is a first scan
                var into = RecordCatalog()
                var merged = RecordCatalog()
                if !firstScan {
                    for path in Self.randomPaths {
                        let albums = try (0..<Int.random(in: 0...4, using: &generator)).map { try randomAlbum(in: path, entry: $0 + 1, using: &generator) }
                        _ = into.update(path: path, albums: albums)
                        _ = merged.update(path: path, albums: albums)
                    }
                }
                let before = Dictionary(uniqueKeysWithValues: into.albums.map { ($0.id, $0) })
                var recorded = firstScan ? CatalogChange.additionsToEmptyCatalog() : CatalogChange()
                var merging = firstScan ? CatalogChange.additionsToEmptyCatalog() : CatalogChange()
                // When: one batch, as a scan or a drain of events makes it
                var removals = false
                for _ in 0..<Int.random(in: 1...10, using: &generator) {
                    let path = Self.randomPaths.randomElement(using: &generator) ?? Self.randomPaths[0]
                    if Int.random(in: 0..<5, using: &generator) == 0 {
                        removals = true
                        recorded.merge(into.remove(path: path))
                        merging.merge(merged.remove(path: path))
                    } else {
                        let albums = try (0..<Int.random(in: 0...8, using: &generator)).map { try randomAlbum(in: path, entry: $0 + 1, using: &generator) }
                        into.update(path: path, albums: albums, into: &recorded)
                        merging.merge(merged.update(path: path, albums: albums))
                    }
                }
                if firstScan {
                    recorded.keepWinners { into.album($0) }
                    merging.keepWinners { merged.album($0) }
                }
                // Then: the same as merging, in the same order ...
                let order: ([Album]) -> [String] = { $0.map { "\($0.id) \($0.record) \($0.position)" } }
                let context: Comment = "seed \(seed), first scan \(firstScan), removals \(removals)"
                #expect(order(recorded.upserted) == order(merging.upserted), context)
                #expect(order(recorded.removed) == order(merging.removed), context)
                #expect(recorded.duplicates == merging.duplicates, context)
                // ... and what the catalog's albums say changed: those in effect
                // before and not after are removed, those new or different upserted
                let after = Dictionary(uniqueKeysWithValues: into.albums.map { ($0.id, $0) })
                #expect(recorded.removed.map(\.id).sorted() == before.keys.filter { after[$0] == nil }.sorted(), context)
                #expect(recorded.upserted.map(\.id).sorted() == after.values.filter { before[$0.id] != $0 }.map(\.id).sorted(), context)
            }
        }
    }

    @Test("Given ids held by up to four files, when files come and go in any order, then each id's album is the first entry of the first path")
    func winnersFollowThePathOrderThroughEveryChange() throws {
        for seed in 0..<300 as Range<UInt64> {
            var generator = SplitMix64(seed: seed)
            // Given: a catalog and a model of it, the files' albums as given
            var catalog = RecordCatalog()
            var model: [String: [Album]] = [:]
            var mirror: [AlbumID: Album] = [:]  // The albums in effect, as the changes tell them.
            for step in 0..<Int.random(in: 1...16, using: &generator) {
                let path = Self.randomPaths.randomElement(using: &generator) ?? Self.randomPaths[0]
                // When
                let change: CatalogChange
                if Int.random(in: 0..<4, using: &generator) == 0 {
                    change = catalog.remove(path: path)
                    model[path] = nil
                } else {
                    let albums = try (0..<Int.random(in: 0...6, using: &generator)).map { try randomAlbum(in: path, entry: $0 + 1, using: &generator) }
                    change = catalog.update(path: path, albums: albums)
                    model[path] = albums
                }
                for album in change.removed { mirror[album.id] = nil }
                for album in change.upserted { mirror[album.id] = album }
                // Then: the rule, worked out from scratch
                var expected: [AlbumID: Album] = [:]
                for path in model.keys.sorted().reversed() {
                    for album in (model[path] ?? []).reversed() { expected[album.id] = album }
                }
                let context: Comment = "seed \(seed), step \(step)"
                #expect(catalog.albumCount == expected.count, context)
                for (id, album) in expected {
                    let found = catalog.album(id)
                    #expect(found == album, context)
                    #expect(mirror[id] == album, context)
                }
                #expect(mirror.count == expected.count, context)
                #expect(catalog.inconsistencies == [], context)
            }
        }
    }

    @Test("Given the catalog's table, when its entry is measured, then it takes 24 bytes at most")
    func entryStaysSmall() {
        // At 100,000 albums the table has 262,144 buckets: 40 bytes each with
        // the id, not 48 (the list of other holders inline).
        #expect(RecordCatalog.entryStride <= 24)
    }
}
