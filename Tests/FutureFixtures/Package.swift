// swift-tools-version: 6.0
// Fixtures built against a "future" SDK: `make fixtures` builds this package
// with -DPLUGBOARD_TESTING_FUTURE_SDK, which turns the SDK into ABI 1.1 with
// an extra API. Hosts (ABI 1.0) must refuse both plugins, naming why.
import PackageDescription

let sdk: Target.Dependency = .product(name: "Plugboard", package: "SDK")

let package = Package(
    name: "FutureFixtures",
    products: [
        .library(name: "FutureAPI", type: .dynamic, targets: ["FutureAPI"]),
        .library(name: "FutureABI", type: .dynamic, targets: ["FutureABI"]),
    ],
    dependencies: [.package(path: "../../SDK")],
    targets: [
        .target(name: "FutureAPI", dependencies: [sdk], swiftSettings: [.swiftLanguageMode(.v6), .enableUpcomingFeature("ExistentialAny")]),
        .target(name: "FutureABI", dependencies: [sdk], swiftSettings: [.swiftLanguageMode(.v6), .enableUpcomingFeature("ExistentialAny")]),
    ]
)
