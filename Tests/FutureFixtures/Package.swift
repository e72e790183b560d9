// swift-tools-version: 6.0
// Fixtures built against a "future" SDK: `make fixtures` first runs
// make-future-sdk, which copies SDK/ into FutureSDK/ one ABI minor ahead with
// an extra API. Hosts built with the real SDK must refuse both plugins,
// naming why. The shipped SDK holds nothing of this.
import PackageDescription

let sdk: Target.Dependency = .product(name: "Plugboard", package: "FutureSDK")

let package = Package(
    name: "FutureFixtures",
    products: [
        .library(name: "FutureAPI", type: .dynamic, targets: ["FutureAPI"]),
        .library(name: "FutureABI", type: .dynamic, targets: ["FutureABI"]),
    ],
    dependencies: [.package(path: "FutureSDK")],
    targets: [
        .target(name: "FutureAPI", dependencies: [sdk], swiftSettings: [.swiftLanguageMode(.v6), .enableUpcomingFeature("ExistentialAny")]),
        .target(name: "FutureABI", dependencies: [sdk], swiftSettings: [.swiftLanguageMode(.v6), .enableUpcomingFeature("ExistentialAny")]),
    ]
)
