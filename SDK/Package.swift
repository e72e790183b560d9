// swift-tools-version: 6.0
//
// The Plugboard SDK: the one package a plugin author depends on.
//
// It vends exactly one product, a *dynamic* library, so that a host and all of
// its plugins share one copy of the SDK's types in the process. Linking the SDK
// statically into a plugin or a host gives each image its own protocol
// descriptors and every `as?` cast across the boundary fails. Keep this package
// free of dependencies: it must stay publishable on its own.
import PackageDescription

let package = Package(
    name: "SDK",
    products: [
        .library(name: "Plugboard", type: .dynamic, targets: ["Plugboard"])
    ],
    targets: [
        // The C view of the contract: descriptor layout and the version macros
        // that a plugin captures when *it* is compiled.
        .target(name: "CPlugboard"),
        .target(
            name: "Plugboard",
            dependencies: ["CPlugboard"],
            swiftSettings: [.swiftLanguageMode(.v6), .enableUpcomingFeature("ExistentialAny")]
        ),
    ]
)
