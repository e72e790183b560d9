// swift-tools-version: 6.0
// Test fixtures: plugins broken on purpose, one dynamic library per case, all
// built by one `swift build` (see `make fixtures`). Each depends on the SDK
// product only, like an outside plugin.
import PackageDescription

let strict: [SwiftSetting] = [.swiftLanguageMode(.v6)]
let sdk: Target.Dependency = .product(name: "Plugboard", package: "SDK")

let package = Package(
    name: "Fixtures",
    products: [
        .library(name: "Alpha", type: .dynamic, targets: ["Alpha"]),
        .library(name: "Beta", type: .dynamic, targets: ["Beta"]),
        .library(name: "Gamma", type: .dynamic, targets: ["Gamma"]),
        .library(name: "CouponRival", type: .dynamic, targets: ["CouponRival"]),
        .library(name: "ReloadReshaped", type: .dynamic, targets: ["ReloadReshaped"]),
        .library(name: "ReloadCrash", type: .dynamic, targets: ["ReloadCrash"]),
        .library(name: "ReloadFailActivate", type: .dynamic, targets: ["ReloadFailActivate"]),
        .library(name: "ReloadV2", type: .dynamic, targets: ["ReloadV2"]),
        .library(name: "ReloadV1", type: .dynamic, targets: ["ReloadV1"]),
        .library(name: "ProbeB", type: .dynamic, targets: ["ProbeB"]),
        .library(name: "ProbeA", type: .dynamic, targets: ["ProbeA"]),
        .library(name: "RouteOwnerB", type: .dynamic, targets: ["RouteOwnerB"]),
        .library(name: "RouteOwnerA", type: .dynamic, targets: ["RouteOwnerA"]),
        .library(name: "AlphaOld", type: .dynamic, targets: ["AlphaOld"]),
        .library(name: "NoEntry", type: .dynamic, targets: ["NoEntry"]),
        .library(name: "NullDescriptor", type: .dynamic, targets: ["NullDescriptor"]),
        .library(name: "BadMagic", type: .dynamic, targets: ["BadMagic"]),
        .library(name: "BadLayout", type: .dynamic, targets: ["BadLayout"]),
        .library(name: "ABIMajor", type: .dynamic, targets: ["ABIMajor"]),
        .library(name: "ABINewer", type: .dynamic, targets: ["ABINewer"]),
        .library(name: "ForeignToolchain", type: .dynamic, targets: ["ForeignToolchain"]),
        .library(name: "InvalidID", type: .dynamic, targets: ["InvalidID"]),
        .library(name: "InitThrows", type: .dynamic, targets: ["InitThrows"]),
        .library(name: "ActivateThrows", type: .dynamic, targets: ["ActivateThrows"]),
        .library(name: "InterfaceNewer", type: .dynamic, targets: ["InterfaceNewer"]),
        .library(name: "Undeclared", type: .dynamic, targets: ["Undeclared"]),
        .library(name: "WrongProvider", type: .dynamic, targets: ["WrongProvider"]),
        .library(name: "MissingProvider", type: .dynamic, targets: ["MissingProvider"]),
    ],
    dependencies: [.package(path: "../../SDK")],
    targets: [
        .target(name: "FixtureSupport", dependencies: [sdk], swiftSettings: strict),
        .target(name: "Alpha", dependencies: ["FixtureSupport", sdk], swiftSettings: strict),
        .target(name: "Beta", dependencies: ["FixtureSupport", sdk], swiftSettings: strict),
        .target(name: "Gamma", dependencies: ["FixtureSupport", sdk], swiftSettings: strict),
        .target(name: "CouponRival", dependencies: ["FixtureSupport", sdk], swiftSettings: strict),
        .target(name: "ReloadReshaped", dependencies: ["FixtureSupport", sdk], swiftSettings: strict),
        .target(name: "ReloadCrash", dependencies: ["FixtureSupport", sdk], swiftSettings: strict),
        .target(name: "ReloadFailActivate", dependencies: ["FixtureSupport", sdk], swiftSettings: strict),
        .target(name: "ReloadV2", dependencies: ["FixtureSupport", sdk], swiftSettings: strict),
        .target(name: "ReloadV1", dependencies: ["FixtureSupport", sdk], swiftSettings: strict),
        .target(name: "ProbeB", dependencies: ["FixtureSupport", sdk], swiftSettings: strict),
        .target(name: "ProbeA", dependencies: ["FixtureSupport", sdk], swiftSettings: strict),
        .target(name: "RouteOwnerB", dependencies: ["FixtureSupport", sdk], swiftSettings: strict),
        .target(name: "RouteOwnerA", dependencies: ["FixtureSupport", sdk], swiftSettings: strict),
        .target(name: "AlphaOld", dependencies: ["FixtureSupport", sdk], swiftSettings: strict),
        .target(name: "NoEntry", dependencies: ["FixtureSupport", sdk], swiftSettings: strict),
        .target(name: "NullDescriptor", dependencies: ["FixtureSupport", sdk], swiftSettings: strict),
        .target(name: "BadMagic", dependencies: ["FixtureSupport", sdk], swiftSettings: strict),
        .target(name: "BadLayout", dependencies: ["FixtureSupport", sdk], swiftSettings: strict),
        .target(name: "ABIMajor", dependencies: ["FixtureSupport", sdk], swiftSettings: strict),
        .target(name: "ABINewer", dependencies: ["FixtureSupport", sdk], swiftSettings: strict),
        .target(name: "ForeignToolchain", dependencies: ["FixtureSupport", sdk], swiftSettings: strict),
        .target(name: "InvalidID", dependencies: ["FixtureSupport", sdk], swiftSettings: strict),
        .target(name: "InitThrows", dependencies: ["FixtureSupport", sdk], swiftSettings: strict),
        .target(name: "ActivateThrows", dependencies: ["FixtureSupport", sdk], swiftSettings: strict),
        .target(name: "InterfaceNewer", dependencies: ["FixtureSupport", sdk], swiftSettings: strict),
        .target(name: "Undeclared", dependencies: ["FixtureSupport", sdk], swiftSettings: strict),
        .target(name: "WrongProvider", dependencies: ["FixtureSupport", sdk], swiftSettings: strict),
        .target(name: "MissingProvider", dependencies: ["FixtureSupport", sdk], swiftSettings: strict),
    ]
)
