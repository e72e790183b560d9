// swift-tools-version: 6.0
// An example Plugboard plugin, built the way an outside author builds theirs:
// it depends on the SDK package and the demo host's interface package
// (never on the host), and vends one dynamic library.
import PackageDescription

let package = Package(
    name: "Checkout",
    products: [
        .library(name: "Checkout", type: .dynamic, targets: ["Checkout"])
    ],
    dependencies: [
        // Outside this repository: .package(path: "/path/to/plugboard/SDK")
        .package(path: "../../SDK"),
        // The demo host's extension points (screen sections, validation).
        .package(path: "../../Examples/DemoInterfaces"),
    ],
    targets: [
        .target(
            name: "Checkout",
            dependencies: [
                .product(name: "Plugboard", package: "SDK"),
                .product(name: "DemoInterfaces", package: "DemoInterfaces"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6), .enableUpcomingFeature("ExistentialAny")]
        ),
        // Unit tests with the SDK's PluginHarness: no host, one SDK copy.
        .testTarget(
            name: "CheckoutTests",
            dependencies: [
                "Checkout",
                .product(name: "Plugboard", package: "SDK"),
                .product(name: "DemoInterfaces", package: "DemoInterfaces"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6), .enableUpcomingFeature("ExistentialAny")]
        ),
    ]
)
