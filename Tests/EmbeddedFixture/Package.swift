// swift-tools-version: 6.0
// A fixture packaged the wrong way: the plugin links the SDK's *sources*
// (symlinked targets) statically instead of depending on the SDK's dynamic
// product, so it carries its own copy of every SDK type. Hosts must refuse it
// as `sdk-embedded`, with the fix. `mispackaged-host` makes the same mistake
// on the host side; it must report `sdk-duplicated` for a correct plugin.
import PackageDescription

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
        .target(name: "PlugboardHost", dependencies: ["Plugboard", "CPlugboardHost"], swiftSettings: [.swiftLanguageMode(.v6), .enableUpcomingFeature("ExistentialAny")]),
        .executableTarget(name: "mispackaged-host", dependencies: ["PlugboardHost", "Plugboard"], swiftSettings: [.swiftLanguageMode(.v6), .enableUpcomingFeature("ExistentialAny")]),
    ]
)
