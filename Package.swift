// swift-tools-version:6.0
import PackageDescription

// One library target per layer; each depends only on the layers below it, so
// this graph is the architecture (DEVELOPERS.md draws it). Each C library is
// imported by exactly one layer: libcurl by CoverdFetch, SQLite by
// CoverdCache, libsystemd by CoverdSystemd, the image libraries by
// CoverdImages. `CLinux` is the kernel's interfaces Glibc does not export.
let package = Package(
    name: "coverd",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "coverd", targets: ["coverd"])
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
    ],
    targets: [
        // C libraries: a module map and one shim header each, no logic.
        .systemLibrary(name: "CCurl", path: "Sources/CCurl"),
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite"),
        .systemLibrary(name: "CSystemd", path: "Sources/CSystemd"),
        .systemLibrary(name: "CLinux", path: "Sources/CLinux"),
        .systemLibrary(name: "CZlib", path: "Sources/CZlib"),
        .systemLibrary(name: "CDeflate", path: "Sources/CDeflate"),
        .systemLibrary(name: "CJPEG", path: "Sources/CJPEG"),
        .systemLibrary(name: "CPNG", path: "Sources/CPNG"),
        .systemLibrary(name: "CWebP", path: "Sources/CWebP"),
        .systemLibrary(name: "CGIF", path: "Sources/CGIF"),
        .systemLibrary(name: "CPixman", path: "Sources/CPixman", pkgConfig: "pixman-1"),

        // The base: the bus, system helpers (descriptors, errors, paths, timers), liveness probes.
        .target(name: "CoverdBase", dependencies: ["CLinux"]),
        // What every layer talks about: albums, their ids and cover URLs, cover states and counts.
        .target(name: "CoverdModel"),
        // Album records: parsing, the catalog, the inotify watcher, the record writer.
        .target(name: "CoverdRecords", dependencies: ["CoverdBase", "CoverdModel", "CLinux"]),
        // Images: sniffing, PNG validation, decoding, scaling, PNG encoding.
        .target(
            name: "CoverdImages",
            dependencies: ["CZlib", "CDeflate", "CJPEG", "CPNG", "CWebP", "CGIF", "CPixman"]),
        // HTTP transfers with libcurl's multi interface.
        .target(name: "CoverdFetch", dependencies: ["CoverdBase", "CoverdModel", "CCurl", "CLinux"]),
        // Finding covers by themselves: MusicBrainz and the Cover Art Archive, through the fetcher.
        .target(name: "CoverdLookup", dependencies: ["CoverdBase", "CoverdModel", "CoverdFetch"]),
        // The cache: cover files written atomically, the SQLite index, the cache's lock.
        .target(name: "CoverdCache", dependencies: ["CoverdBase", "CoverdModel", "CSQLite", "CLinux"]),
        // The coordinator (the facade) and its pure planner. Freshness (validators,
        // revalidation) belongs here and in the cache's index.
        .target(
            name: "CoverdSync",
            dependencies: ["CoverdBase", "CoverdModel", "CoverdRecords", "CoverdFetch", "CoverdLookup", "CoverdImages", "CoverdCache"]),
        // swift-log handlers for standard error, and the shared level.
        .target(
            name: "CoverdLogging",
            dependencies: ["CoverdBase", .product(name: "Logging", package: "swift-log")]),
        // systemd: sd_notify, the watchdog, the journal's native protocol.
        .target(
            name: "CoverdSystemd",
            dependencies: [
                "CoverdBase", "CoverdModel", "CoverdSync", "CoverdLogging", "CSystemd",
                .product(name: "Logging", package: "swift-log"),
            ]),
        // The control channel (`refresh`, `status --follow`): a Unix-socket server the daemon starts,
        // above CoverdSync, and its client, which `refresh` and `status --follow` use.
        .target(name: "CoverdControl", dependencies: ["CoverdBase", "CoverdModel", "CoverdSync", "CoverdCache", "CLinux"]),
        // `coverd status` and `coverd verify`: the index and the covers, read from outside the daemon.
        .target(name: "CoverdStatus", dependencies: ["CoverdBase", "CoverdModel", "CoverdCache", "CoverdImages"]),
        // `coverd remove` and `coverd undo`: an album taken out of its record file, and the undo
        // journal in the cache directory that puts it back. Outside the daemon, like `status`.
        .target(name: "CoverdUndo", dependencies: ["CoverdBase", "CoverdModel", "CoverdRecords", "CoverdCache"]),
        // coverd.toml and the defaults: every layer's settings in one `Configuration`.
        .target(
            name: "CoverdConfig",
            dependencies: [
                "CoverdBase", "CoverdModel", "CoverdRecords", "CoverdFetch", "CoverdLookup", "CoverdImages", "CoverdSync",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "TOMLKit", package: "TOMLKit"),
            ]),
        // The daemon: builds the parts, wires them to one bus, signals, reload, shutdown, the event log.
        .target(
            name: "CoverdDaemon",
            dependencies: [
                "CoverdBase", "CoverdModel", "CoverdRecords", "CoverdFetch", "CoverdLookup", "CoverdCache", "CoverdSync",
                "CoverdLogging", "CoverdSystemd", "CoverdConfig", "CoverdControl",
                .product(name: "Logging", package: "swift-log"),
            ]),
        // The executable: one ParsableCommand per subcommand, nothing else.
        .executableTarget(
            name: "coverd",
            dependencies: [
                "CoverdBase", "CoverdModel", "CoverdRecords", "CoverdFetch", "CoverdLogging", "CoverdSystemd",
                "CoverdStatus", "CoverdUndo", "CoverdConfig", "CoverdDaemon", "CoverdControl", "CoverdSync",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // Shared by the test targets: fixtures (PNG encoder, archives) and process helpers.
        .target(
            name: "CoverdTestSupport",
            dependencies: ["CoverdBase", "CoverdModel", "CoverdImages", "CLinux"],
            path: "Tests/Support",
            exclude: ["cover_server.py", "make_hostile_records.py", "musicbrainz_server.py", "run_in_pty.py", "test_musicbrainz_server.py"]
        ),
        .testTarget(name: "CoverdBaseTests", dependencies: ["CLinux", "CoverdBase", "CoverdTestSupport"]),
        .testTarget(name: "CoverdModelTests", dependencies: ["CoverdModel", "CoverdTestSupport"]),
        .testTarget(name: "CoverdRecordsTests", dependencies: ["CoverdModel", "CoverdRecords", "CoverdTestSupport"]),
        .testTarget(name: "CoverdImagesTests", dependencies: ["CoverdImages", "CoverdTestSupport"]),
        .testTarget(name: "CoverdFetchTests", dependencies: ["CoverdBase", "CoverdFetch", "CoverdModel", "CoverdTestSupport"]),
        .testTarget(name: "CoverdLookupTests", dependencies: ["CoverdLookup", "CoverdModel", "CoverdTestSupport"]),
        .testTarget(name: "CoverdCacheTests", dependencies: ["CLinux", "CoverdBase", "CoverdCache", "CoverdModel", "CoverdTestSupport"]),
        .testTarget(name: "CoverdSyncTests", dependencies: ["CoverdBase", "CoverdCache", "CoverdFetch", "CoverdImages", "CoverdLookup", "CoverdModel", "CoverdRecords", "CoverdSync", "CoverdTestSupport"]),
        .testTarget(name: "CoverdLoggingTests", dependencies: ["CoverdLogging", .product(name: "Logging", package: "swift-log")]),
        .testTarget(name: "CoverdSystemdTests", dependencies: ["CoverdBase", "CoverdLogging", "CoverdModel", "CoverdSync", "CoverdSystemd", .product(name: "Logging", package: "swift-log"), "CoverdTestSupport"]),
        .testTarget(name: "CoverdStatusTests", dependencies: ["CoverdBase", "CoverdCache", "CoverdModel", "CoverdStatus", "CoverdTestSupport"]),
        .testTarget(name: "CoverdUndoTests", dependencies: ["CoverdBase", "CoverdModel", "CoverdRecords", "CoverdUndo", "CoverdTestSupport"]),
        .testTarget(
            name: "CoverdControlTests",
            dependencies: ["CLinux", "CoverdBase", "CoverdCache", "CoverdControl", "CoverdModel", "CoverdSync", "CoverdTestSupport"]),
        .testTarget(name: "CoverdConfigTests", dependencies: ["CoverdBase", "CoverdConfig", "CoverdImages", "CoverdTestSupport"]),
        .testTarget(
            name: "CoverdDaemonTests",
            dependencies: [
                "CoverdBase", "CoverdCache", "CoverdConfig", "CoverdDaemon", "CoverdFetch", "CoverdModel", "CoverdRecords", "CoverdSync",
                "CoverdTestSupport", .product(name: "Logging", package: "swift-log"), .product(name: "InMemoryLogging", package: "swift-log"),
            ]),
        .testTarget(name: "EndToEndTests", dependencies: ["CLinux", "CoverdBase", "CoverdCache", "CoverdImages", "CoverdModel", "CoverdRecords", "CoverdSync", "CoverdSystemd", "CoverdTestSupport"]),
    ]
)
