// swift-tools-version:6.1
// Benchmarks of the bridge's in-process value path (ordo-one/benchmark), kept out of the root
// package so that its build and its dependencies stay out of the bridge's. Run from the repository
// root with `scripts/check-allocations`, or:
//
//   swift package --package-path Benchmarks benchmark --target ValuePath
//   swift package --package-path Benchmarks benchmark --target Families   (one frame of each family)
import PackageDescription

// SwiftPM names a path dependency after its directory (the worktree's name, e.g. "main"), so the
// root package's identity is taken from this manifest's own path: <root>/Benchmarks/Package.swift.
let root = String(#filePath.split(separator: "/").dropLast(2).last ?? "ble-mqtt-bridge")

let package = Package(
    name: "ble-mqtt-bridge-benchmarks",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", exact: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "ValuePath",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "BridgeCore", package: root),
                .product(name: "DBusKit", package: root),
                .product(name: "BlueZ", package: root),
            ],
            path: "ValuePath",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // Decoding one advertisement of each family (SPEC §13): Families/Families.swift.
        .executableTarget(
            name: "Families",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "BridgeCore", package: root),
            ],
            path: "Families",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ]
)
