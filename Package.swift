// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "coverd",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "coverd", targets: ["coverd"]),
        .library(name: "CoverdCore", targets: ["CoverdCore"]),
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

        .target(
            name: "CoverdCore",
            dependencies: [
                "CCurl", "CSQLite", "CSystemd", "CLinux", "CZlib", "CDeflate", "CJPEG", "CPNG", "CWebP", "CGIF", "CPixman",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "TOMLKit", package: "TOMLKit"),
            ]
        ),
        .executableTarget(
            name: "coverd",
            dependencies: [
                "CoverdCore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // Shared by both test targets: fixtures (PNG encoder, archives) and process helpers.
        .target(
            name: "CoverdTestSupport",
            dependencies: ["CoverdCore"],
            path: "Tests/Support",
            exclude: ["cover_server.py", "make_hostile_records.py"]
        ),
        .testTarget(
            name: "CoverdCoreTests",
            dependencies: ["CoverdCore", "CoverdTestSupport"]
        ),
        .testTarget(
            name: "EndToEndTests",
            dependencies: ["CoverdCore", "CoverdTestSupport"]
        ),
    ]
)
