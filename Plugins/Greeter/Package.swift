// swift-tools-version: 6.0
// An example Plugboard plugin, built the way an outside author builds theirs:
// it depends on the SDK package only, and vends one dynamic library.
import PackageDescription

let package = Package(
    name: "Greeter",
    products: [
        .library(name: "Greeter", type: .dynamic, targets: ["Greeter"])
    ],
    dependencies: [
        // Outside this repository: .package(path: "/path/to/plugboard/SDK")
        .package(path: "../../SDK")
    ],
    targets: [
        .target(
            name: "Greeter",
            dependencies: [.product(name: "Plugboard", package: "SDK")],
            swiftSettings: [.swiftLanguageMode(.v6), .enableUpcomingFeature("ExistentialAny")]
        ),
        // Unit tests with the SDK's PluginHarness: no host, one SDK copy.
        .testTarget(
            name: "GreeterTests",
            dependencies: ["Greeter", .product(name: "Plugboard", package: "SDK")],
            swiftSettings: [.swiftLanguageMode(.v6), .enableUpcomingFeature("ExistentialAny")]
        ),
    ]
)
