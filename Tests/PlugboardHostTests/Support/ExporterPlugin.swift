import Foundation

/// Writes, in `folder`, a plugin package of the `Exporters` interface (made
/// by `plugboard new Exporters --interface` in `interface`): one provider
/// named `csv`, plugin id `com.example.csv`. `sdk` is its SDK dependency as
/// a manifest line, with the package identity its product is named under.
func writeExporterPlugin(at folder: String, sdk: (line: String, identity: String), interface: String) throws {
    try FileManager.default.createDirectory(atPath: folder + "/Sources/CSVExporter", withIntermediateDirectories: true)
    try """
        // swift-tools-version: 6.0
        import PackageDescription
        let package = Package(
            name: "CSVExporter",
            products: [.library(name: "CSVExporter", type: .dynamic, targets: ["CSVExporter"])],
            dependencies: [\(sdk.line), .package(path: "\(interface)")],
            targets: [.target(name: "CSVExporter", dependencies: [
                .product(name: "Plugboard", package: "\(sdk.identity)"), .product(name: "Exporters", package: "Exporters"),
            ])]
        )
        """.write(toFile: folder + "/Package.swift", atomically: true, encoding: .utf8)
    try """
        import Exporters
        import Plugboard

        final class CSVExporter: Plugin {
            init(context: PluginContext) throws {}
            func contributions() -> [Contribution] { [.provider(CSV(), for: Exporters.self)] }
        }

        struct CSV: ExportersProvider { let name = "csv" }

        @_cdecl("plugboard_entry")
        public func plugboardEntry() -> UnsafeRawPointer {
            PluginExport.descriptor(for: CSVExporter.self, id: "com.example.csv", version: "1.0.0", provides: [Exporters.interface])
        }
        """.write(toFile: folder + "/Sources/CSVExporter/CSVExporter.swift", atomically: true, encoding: .utf8)
}
