// swift-tools-version: 6.0
// An example Plugboard plugin, built the way an outside author builds theirs:
// it depends on the SDK package and the demo host's interface package
// (never on the host), and vends one dynamic library.
import PackageDescription

let package = Package(
    name: "Coupons",
    products: [
        .library(name: "Coupons", type: .dynamic, targets: ["Coupons"])
    ],
    dependencies: [
        // Outside this repository: .package(path: "/path/to/plugboard/SDK")
        .package(path: "../../SDK"),
        // The demo host's extension points (screen sections, validation).
        .package(path: "../../Examples/DemoInterfaces"),
    ],
    targets: [
        .target(
            name: "Coupons",
            dependencies: [
                .product(name: "Plugboard", package: "SDK"),
                .product(name: "DemoInterfaces", package: "DemoInterfaces"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6), .enableUpcomingFeature("ExistentialAny")]
        ),
        // Unit tests with the SDK's PluginHarness: no host, one SDK copy.
        .testTarget(
            name: "CouponsTests",
            dependencies: [
                "Coupons",
                .product(name: "Plugboard", package: "SDK"),
                .product(name: "DemoInterfaces", package: "DemoInterfaces"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6), .enableUpcomingFeature("ExistentialAny")]
        ),
    ]
)
