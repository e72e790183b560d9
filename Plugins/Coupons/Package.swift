// swift-tools-version: 6.0
// An example Plugboard plugin, built the way an outside author builds theirs:
// it depends on the SDK package only, and vends one dynamic library.
import PackageDescription

let package = Package(
    name: "Coupons",
    products: [
        .library(name: "Coupons", type: .dynamic, targets: ["Coupons"])
    ],
    dependencies: [
        // Outside this repository: .package(path: "/path/to/plugboard/SDK")
        .package(path: "../../SDK")
    ],
    targets: [
        .target(
            name: "Coupons",
            dependencies: [.product(name: "Plugboard", package: "SDK")],
            swiftSettings: [.swiftLanguageMode(.v6), .enableUpcomingFeature("ExistentialAny")]
        )
    ]
)
