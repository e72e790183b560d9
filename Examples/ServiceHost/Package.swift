// swift-tools-version: 6.0
//
// A host that runs in a swift-service-lifecycle ServiceGroup and logs its
// plugins through swift-log: the two integrations docs/host-authors.md
// shows ("In a service group") and docs/host-services.md ("Logging"),
// compiled against the real packages. Outside `make test` (the library
// takes no third-party package); `make example-service` builds it and
// stops it with SIGTERM.
import Foundation
import PackageDescription

// A package by path is named after its folder: the checkout's, whatever it is called.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

let package = Package(
    name: "ServiceHost",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: root.path),
        .package(path: root.appendingPathComponent("SDK").path),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.0"),
    ],
    targets: [
        .executableTarget(name: "ServiceHost", dependencies: [
            .product(name: "PlugboardHost", package: root.lastPathComponent.lowercased()),
            .product(name: "Plugboard", package: "sdk"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "Logging", package: "swift-log"),
        ], swiftSettings: [.enableUpcomingFeature("ExistentialAny")]),
    ]
)
