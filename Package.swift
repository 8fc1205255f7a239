// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "ble-mqtt-bridge",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "ble-mqtt-bridge", targets: ["ble-mqtt-bridge"]),
        .executable(name: "bluez-sim", targets: ["bluez-sim"]),
        .executable(name: "ble-mqtt-bridge-web", targets: ["ble-mqtt-bridge-web"]),
        .library(name: "DBusKit", targets: ["DBusKit"]),
        .library(name: "BlueZ", targets: ["BlueZ"]),
        .library(name: "MQTT", targets: ["MQTT"]),
        .library(name: "BridgeCore", targets: ["BridgeCore"]),
        .library(name: "ConfigLoader", targets: ["ConfigLoader"]),
        .library(name: "RuntimeCore", targets: ["RuntimeCore"]),
        .library(name: "Bridge", targets: ["Bridge"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
        // The page's HTTP server (SPEC §14), for WebUI and ble-mqtt-bridge-web only. No default traits: no
        // swift-configuration, no full Foundation.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.0.0", traits: []),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.0.0", traits: []),
    ],
    targets: [
        .systemLibrary(name: "CDBus", pkgConfig: "dbus-1", providers: [.apt(["libdbus-1-dev"])]),
        .systemLibrary(name: "CMosquitto", pkgConfig: "libmosquitto", providers: [.apt(["libmosquitto-dev"])]),
        .systemLibrary(name: "CYAML", pkgConfig: "yaml-0.1", providers: [.apt(["libyaml-dev"])]),
        .systemLibrary(name: "CCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        // epoll, which Glibc's module map leaves out.
        .systemLibrary(name: "CLinux"),
        .target(
            name: "DBusKit",
            dependencies: ["CDBus", "BridgeBase", .product(name: "Logging", package: "swift-log")]
        ),
        .target(
            name: "MQTT",
            dependencies: ["CMosquitto", "BridgeBase", .product(name: "Logging", package: "swift-log")]
        ),
        .target(name: "YAMLKit", dependencies: ["CYAML"]),
        // The one copy of what every module shares: Bluetooth addresses and UUIDs, hex, backoff,
        // the broker URL. No dependencies.
        .target(name: "BridgeBase"),
        .target(
            name: "BlueZ",
            dependencies: ["DBusKit", "BridgeBase", "CLinux", .product(name: "Logging", package: "swift-log")]
        ),
        // The bridge's model and pure logic: no C module below it (its AES is Swift, Crypto/AES128).
        .target(
            name: "BridgeCore",
            dependencies: ["BridgeBase", .product(name: "Logging", package: "swift-log")]
        ),
        // bridge.yaml: `BridgeConfig.load`/`parse`, the YAML tree decoded into BridgeCore's config types.
        .target(
            name: "ConfigLoader",
            dependencies: ["BridgeCore", "YAMLKit", "BridgeBase", .product(name: "Logging", package: "swift-log")]
        ),
        // The runtime's decisions as pure state machines (sessions, supervisor, cluster): no I/O, no clock, no
        // D-Bus or MQTT below them. Bridge's executors run them.
        .target(
            name: "RuntimeCore",
            dependencies: ["BridgeCore", "BridgeBase", .product(name: "Logging", package: "swift-log")]
        ),
        .target(
            name: "Bridge",
            dependencies: [
                "RuntimeCore", "BridgeCore", "BlueZ", "MQTT", "BridgeBase", "ConfigLoader",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .target(
            name: "BluezSimKit",
            dependencies: [
                "DBusKit", "BridgeBase", "CCrypto", "YAMLKit",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "ble-mqtt-bridge",
            dependencies: [
                "Bridge", "BridgeCore", "ConfigLoader", "BlueZ", "MQTT",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]
        ),
        // The fuzz targets: a corpus replayer in normal builds; scripts/fuzz builds it with
        // -sanitize=fuzzer,address -DFUZZING for libFuzzer.
        .executableTarget(
            name: "ble-mqtt-bridge-fuzz",
            dependencies: ["BridgeBase", "BridgeCore", "ConfigLoader", "DBusKit", "RuntimeCore"]
        ),
        // Decodes advertisements given as text lines (scripts/check-decoders' side of the cross-check).
        .executableTarget(name: "ble-decode", dependencies: ["BridgeCore"]),
        .executableTarget(
            name: "bluez-sim",
            dependencies: [
                "BluezSimKit",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The bridge's page (SPEC §14): an HTTP server that talks only MQTT to the broker. Its assets are
        // embedded as Swift (Generated/WebAssets.swift, written by scripts/web-assets from Assets-src/).
        .target(
            name: "WebUI",
            dependencies: [
                "MQTT", "BridgeCore", "BridgeBase",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            exclude: ["Assets-src"]
        ),
        .executableTarget(
            name: "ble-mqtt-bridge-web",
            dependencies: [
                "WebUI", "BridgeCore", "ConfigLoader",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]
        ),
        // A private dbus-daemon for the tests that need a bus (Foundation is fine here: tests only).
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        .testTarget(name: "DBusKitTests", dependencies: ["DBusKit", "BridgeBase", "TestSupport"]),
        .testTarget(name: "MQTTTests", dependencies: ["MQTT", "TestSupport"]),
        .testTarget(name: "BlueZTests", dependencies: ["BlueZ", "DBusKit", "BridgeBase", "TestSupport"]),
        // ConfigLoader: a few BridgeCore tests take their configuration from YAML text.
        .testTarget(name: "BridgeCoreTests", dependencies: ["BridgeCore", "ConfigLoader"]),
        .testTarget(name: "ConfigLoaderTests", dependencies: ["ConfigLoader", "BridgeCore"]),
        .testTarget(name: "RuntimeCoreTests", dependencies: ["RuntimeCore", "BridgeCore", "ConfigLoader", "BridgeBase"]),
        .testTarget(
            name: "BridgeTests",
            dependencies: [
                "Bridge", "RuntimeCore", "BridgeBase", "BridgeCore", "ConfigLoader", "BlueZ", "DBusKit", "MQTT",
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
            ]
        ),
        .testTarget(
            name: "WebUITests",
            dependencies: [
                // Not HummingbirdTesting: it brings async-http-client, swift-nio-ssl and BoringSSL into
                // every `swift build --build-tests`. The router tests talk raw HTTP/1.1 to a real server.
                "WebUI", "BridgeCore", "MQTT",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .testTarget(name: "YAMLKitTests", dependencies: ["YAMLKit"]),
        .testTarget(name: "BridgeBaseTests", dependencies: ["BridgeBase"]),
        // The executables a test target runs are its dependencies, so that `swift test` and
        // `swift build --build-tests` build them next to the test bundle, where the tests look for
        // them (Tests/IntegrationTests/Harness/Paths.swift): never a stale or missing binary.
        .testTarget(name: "BluezSimKitTests", dependencies: ["BluezSimKit", "bluez-sim"]),
        .testTarget(name: "IntegrationTests", dependencies: ["TestSupport", "ble-mqtt-bridge", "bluez-sim"]),
    ]
)

// MARK: Memory levers (BENCHMARKS.md § Memory: RSS levers; measured with Benchmarks/rss-profile)

/// The modules of `ble-mqtt-bridge`. None uses regexes or other `_StringProcessing` API (a
/// `String.contains("text")` or `split(separator: "ab")` is one: use BridgeBase's TextSearch), so
/// they do not import it implicitly, and such a call fails to compile here. (swift-log,
/// swift-service-lifecycle, swift-async-algorithms and swift-collections still autolink it: only
/// the static standard library below keeps it out of the release binary.)
let bridgeModules: Set<String> = [
    "BridgeBase", "DBusKit", "MQTT", "YAMLKit", "BlueZ", "BridgeCore", "ConfigLoader", "RuntimeCore", "Bridge", "ble-mqtt-bridge",
]
for target in package.targets where bridgeModules.contains(target.name) {
    target.swiftSettings = (target.swiftSettings ?? []) + [
        .unsafeFlags(["-Xfrontend", "-disable-implicit-string-processing-module-import"])
    ]
}

/// The release bridge links the Swift runtime and standard library statically (no
/// libswiftCore.so, libswift_Concurrency.so, libdispatch.so, ... to map), with lld: relative
/// relocations packed (DT_RELR: needs glibc >= 2.36, Debian 12), identical functions folded, and
/// no dynamic symbol table for the executable's own symbols (static-stdlib-args.lnk asks for
/// -export-dynamic; nothing looks the bridge's symbols up at run time). The page's server
/// (`ble-mqtt-bridge-web`) is linked the same way.
for target in package.targets where target.name == "ble-mqtt-bridge" || target.name == "ble-mqtt-bridge-web" {
    // NIO brings FoundationEssentials into the web server; linked statically it needs these two as well.
    let foundationParts: [String] =
        target.name == "ble-mqtt-bridge-web" ? ["-Xlinker", "-l_FoundationCollections", "-Xlinker", "-l_FoundationCShims"] : []
    target.linkerSettings = (target.linkerSettings ?? []) + [
        .unsafeFlags(
            [
                "-static-stdlib", "-use-ld=lld",
                "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs",
                "-Xlinker", "--icf=all",
                "-Xlinker", "--no-export-dynamic",
            ] + foundationParts,
            .when(configuration: .release)
        )
    ]
}
