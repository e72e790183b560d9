// swift-tools-version: 6.0
// The registry and reload stress tests again, under ThreadSanitizer
// (`make test-tsan`, part of `make test`). A package of its own so that the
// sanitized build compiles the host library and these few test files only,
// not every test and tool of the root package (32 s instead of 108 s on two
// cores). Its test files are symlinks to the root package's.
import Foundation
import PackageDescription

// A path dependency's identity is its folder's name, which is the checkout's
// name here (whatever the clone was called).
let checkout = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
let host = checkout.lastPathComponent.lowercased()

let package = Package(
    name: "ThreadSanitized",
    dependencies: [
        .package(path: "../.."),
        .package(path: "../../SDK"),
        .package(path: "../../Examples/DemoInterfaces"),
    ],
    targets: [
        .testTarget(
            name: "PlugboardRaceTests",
            dependencies: [
                .product(name: "PlugboardHost", package: host),
                .product(name: "PlugboardDemo", package: host),
                .product(name: "Plugboard", package: "SDK"),
                .product(name: "DemoInterfaces", package: "DemoInterfaces"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6), .enableUpcomingFeature("ExistentialAny")]),
    ]
)
