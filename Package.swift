// swift-tools-version: 6.0
//
// The Plugboard host: the library a host author embeds (`PlugboardHost`), the
// `plugboard` command-line tool, and their tests.
//
// Every target here depends on the SDK's *dynamic product*, never on an SDK
// target: a target dependency would link a second, static copy of the SDK into
// the host and every cast of a plugin's types would fail (see
// docs/host-authors.md, "Packaging rules").
import PackageDescription

// Every target: Swift 6 mode and `any` spelled out. Warnings are errors in
// `make` (passed there, not here: a package required by version may not
// carry unsafe flags).
let strict: [SwiftSetting] = [.swiftLanguageMode(.v6), .enableUpcomingFeature("ExistentialAny")]
let sdk: Target.Dependency = .product(name: "Plugboard", package: "SDK")
// The demo host's own extension points, published the way any host publishes
// custom ones: a package with one dynamic library (see Examples/DemoInterfaces).
let demoInterfaces: Target.Dependency = .product(name: "DemoInterfaces", package: "DemoInterfaces")

let package = Package(
    name: "plugboard",
    products: [
        .library(name: "PlugboardHost", targets: ["PlugboardHost"]),
        // The dev loop (building and watching a plugin package): for tools, not production hosts.
        .library(name: "PlugboardDev", targets: ["PlugboardDev"]),
        // The demo host's own parts (screen composition, validation report).
        .library(name: "PlugboardDemo", targets: ["PlugboardDemo"]),
        .executable(name: "plugboard", targets: ["plugboard"]),
        // The process of isolated plugins: a product, so that SwiftPM links it
        // beside a client's program (the host library depends on it).
        .executable(name: "plugboard-child", targets: ["plugboard-child"]),
        // The fleet commands (publish, pull, follow, ...), which `plugboard` runs:
        // libcurl stays out of `plugboard`, which scanners and isolated children re-execute.
        .executable(name: "plugboard-fleet", targets: ["plugboard-fleet"]),
    ],
    dependencies: [
        .package(path: "SDK"),
        .package(path: "Examples/DemoInterfaces"),
    ],
    targets: [
        // libcrypto (Debian libssl-dev) for SHA-256: see CPlugboardHost/sha256.c.
        // libdispatch for the main queue's run-loop hooks (shims.c).
        .target(name: "CPlugboardHost", linkerSettings: [.linkedLibrary("crypto"), .linkedLibrary("dispatch")]),
        // The host library, one module per part, bottom to top: a part
        // names only the modules below it, and the compiler refuses the rest
        // (docs/ARCHITECTURE.md, "Modules"; a test checks that graph against
        // this file). `PlugboardHost` is the facade and re-exports them all.
        .target(name: "PlugboardCore", dependencies: [sdk, "CPlugboardHost"], swiftSettings: strict),
        .target(name: "PlugboardAdmission", dependencies: ["PlugboardCore", sdk, "CPlugboardHost"], swiftSettings: strict),
        .target(name: "PlugboardRegistry", dependencies: ["PlugboardCore", sdk], swiftSettings: strict),
        .target(name: "PlugboardServices", dependencies: ["PlugboardAdmission", "PlugboardRegistry", sdk, "CPlugboardHost"], swiftSettings: strict),
        .target(name: "PlugboardLoading", dependencies: ["PlugboardServices", sdk, "CPlugboardHost"], swiftSettings: strict),
        .target(name: "PlugboardCatalog", dependencies: ["PlugboardLoading", sdk, "CPlugboardHost"], swiftSettings: strict),
        .target(name: "PlugboardIsolation", dependencies: ["PlugboardLoading", sdk, "CPlugboardHost"], swiftSettings: strict),
        .target(name: "PlugboardLifecycle", dependencies: ["PlugboardCatalog", "PlugboardIsolation", sdk, "CPlugboardHost"], swiftSettings: strict),
        .target(name: "PlugboardHost", dependencies: ["PlugboardLifecycle", "plugboard-child", sdk, "CPlugboardHost"], swiftSettings: strict),
        // The process of an isolated plugin, with an entry and names of its
        // own (its C constructor, CPlugboardChild, serves the host before
        // main). The host library depends on it, so SwiftPM builds it beside
        // every program that depends on PlugboardHost, where hosts find it.
        .target(name: "CPlugboardChild", dependencies: ["CPlugboardHost"]),
        .executableTarget(name: "plugboard-child", dependencies: ["PlugboardIsolation", "CPlugboardChild", sdk], swiftSettings: strict),
        .target(name: "PlugboardDev", dependencies: ["PlugboardHost", "CPlugboardHost"], swiftSettings: strict),
        // Hooks the benchmark and the fuzzer need into the host's internals
        // (package access): not a product, never linked by a production host.
        .target(name: "PlugboardHostTesting", dependencies: ["PlugboardHost", "CPlugboardHost", sdk], swiftSettings: strict),
        .target(name: "PlugboardDemo", dependencies: ["PlugboardHost", sdk, demoInterfaces], swiftSettings: strict),
        // What `plugboard` and `plugboard-fleet` share: parsing, help, output.
        .target(name: "PlugboardCommandLine", dependencies: ["PlugboardHost"], swiftSettings: strict),
        .executableTarget(name: "plugboard", dependencies: ["PlugboardHost", "PlugboardDev", "PlugboardDemo", "PlugboardCommandLine", sdk, demoInterfaces], swiftSettings: strict),
        // libcurl (Debian libcurl4-openssl-dev) for the OCI registry client only; the directory exchange.
        .target(name: "CPlugboardFleet", linkerSettings: [.linkedLibrary("curl")]),
        // Plugin sets through OCI registries: the registry client, the artifact, the checked install.
        .target(name: "PlugboardFleet", dependencies: ["PlugboardHost", "CPlugboardHost", "CPlugboardFleet"], swiftSettings: strict),
        .executableTarget(name: "plugboard-fleet", dependencies: ["PlugboardFleet", "PlugboardHost", "PlugboardCommandLine"], swiftSettings: strict),
        // `make bench`: benchmarks against baselines measured in the same run.
        .executableTarget(name: "plugboard-bench", dependencies: ["PlugboardHost", "PlugboardHostTesting", "PlugboardDemo", "CBenchFloor", sdk, demoInterfaces], swiftSettings: strict),
        // The isolation bench's floor: a C ping-pong of two processes over a pipe pair.
        .target(name: "CBenchFloor"),
        // Test support: a host that is not `plugboard` (its own scanner, crash journal).
        .executableTarget(name: "plugboard-test-host", dependencies: ["PlugboardHost", "CPlugboardHost", sdk, demoInterfaces], swiftSettings: strict),
        // Test support: a process the storage tests kill mid-write.
        .executableTarget(name: "plugboard-storage-writer", dependencies: ["PlugboardHost", sdk], swiftSettings: strict),
        // `make fuzz` (libFuzzer, with --sanitize=fuzzer) and the corpus replay in `make test`.
        .executableTarget(name: "plugboard-fuzz", dependencies: ["PlugboardHost", "PlugboardHostTesting", "PlugboardDemo", "PlugboardFleet"], swiftSettings: strict),
        .testTarget(
            name: "PlugboardHostTests", dependencies: ["PlugboardHost", "PlugboardDev", "PlugboardDemo", sdk, demoInterfaces], path: "Tests/PlugboardHostTests",
            swiftSettings: strict),
        // Against a real docker-registry each test starts on 127.0.0.1.
        .testTarget(name: "PlugboardFleetTests", dependencies: ["PlugboardFleet", "PlugboardHost", "PlugboardHostTesting", sdk], path: "Tests/PlugboardFleetTests", swiftSettings: strict),
    ]
)
