// swift-tools-version: 6.0
// A fixture packaged the wrong way: the plugin links the SDK's *sources*
// (symlinked targets) statically instead of depending on the SDK's dynamic
// product, so it carries its own copy of every SDK type. Hosts must refuse it
// as `sdk-embedded`, with the fix. `mispackaged-host` makes the same mistake
// on the host side; it must report `sdk-duplicated` for a correct plugin.
import PackageDescription

let strict: [SwiftSetting] = [.swiftLanguageMode(.v6), .enableUpcomingFeature("ExistentialAny")]

let package = Package(
    name: "EmbeddedFixture",
    products: [
        .library(name: "Embedded", type: .dynamic, targets: ["Embedded"]),
        .executable(name: "mispackaged-host", targets: ["mispackaged-host"]),
    ],
    targets: [
        .target(name: "CPlugboard"),
        .target(name: "Plugboard", dependencies: ["CPlugboard"], swiftSettings: [.swiftLanguageMode(.v6), .enableUpcomingFeature("ExistentialAny")]),
        .target(name: "Embedded", dependencies: ["Plugboard"], swiftSettings: [.swiftLanguageMode(.v6), .enableUpcomingFeature("ExistentialAny")]),
        .target(name: "CPlugboardHost", linkerSettings: [.linkedLibrary("crypto")]),
        // The host library's modules (docs/ARCHITECTURE.md), each on the SDK's sources.
        .target(name: "PlugboardCore", dependencies: ["Plugboard", "CPlugboardHost"], swiftSettings: strict),
        .target(name: "PlugboardAdmission", dependencies: ["PlugboardCore", "Plugboard", "CPlugboardHost"], swiftSettings: strict),
        .target(name: "PlugboardRegistry", dependencies: ["PlugboardCore", "Plugboard"], swiftSettings: strict),
        .target(name: "PlugboardServices", dependencies: ["PlugboardAdmission", "PlugboardRegistry", "Plugboard", "CPlugboardHost"], swiftSettings: strict),
        .target(name: "PlugboardLoading", dependencies: ["PlugboardServices", "Plugboard", "CPlugboardHost"], swiftSettings: strict),
        .target(name: "PlugboardCatalog", dependencies: ["PlugboardLoading", "Plugboard", "CPlugboardHost"], swiftSettings: strict),
        .target(name: "PlugboardIsolation", dependencies: ["PlugboardLoading", "Plugboard", "CPlugboardHost"], swiftSettings: strict),
        .target(name: "PlugboardLifecycle", dependencies: ["PlugboardCatalog", "PlugboardIsolation", "Plugboard", "CPlugboardHost"], swiftSettings: strict),
        .target(name: "PlugboardHost", dependencies: ["PlugboardLifecycle", "Plugboard", "CPlugboardHost"], swiftSettings: strict),
        .executableTarget(name: "mispackaged-host", dependencies: ["PlugboardHost", "Plugboard"], swiftSettings: [.swiftLanguageMode(.v6), .enableUpcomingFeature("ExistentialAny")]),
    ]
)
