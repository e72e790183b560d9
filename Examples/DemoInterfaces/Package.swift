// swift-tools-version: 6.0
//
// The demo host's own extension points: screen sections and validation.
//
// This is how a host author publishes custom extension points: a small
// package whose one product is a *dynamic* library, depended on by the host
// and by every plugin that provides them. Like the SDK, it must be one shared
// image in the process, or casts of the providers fail.
import PackageDescription

let package = Package(
    name: "DemoInterfaces",
    products: [
        .library(name: "DemoInterfaces", type: .dynamic, targets: ["DemoInterfaces"])
    ],
    dependencies: [
        .package(path: "../../SDK")
    ],
    targets: [
        .target(
            name: "DemoInterfaces",
            dependencies: [.product(name: "Plugboard", package: "SDK")],
            swiftSettings: [.swiftLanguageMode(.v6), .enableUpcomingFeature("ExistentialAny")]
        )
    ]
)
