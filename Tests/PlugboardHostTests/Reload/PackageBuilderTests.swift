import Foundation
import PlugboardDev
import Testing

/// The dev loop refuses a directory it cannot build as a plugin, with a code
/// and what to do (`swift package dump-package` only: nothing is built).
@Suite struct PackageBuilderTests {
    @Test func aDirectoryWithoutAManifestIsNotAPackage() throws {
        let dir = try TemporaryDirectory()
        let failure = #expect(throws: PackageBuilder.Failure.self) { try PackageBuilder(packageDirectory: dir.path) }
        #expect(failure?.code == .notAPackage)
        #expect(failure?.reason.contains("the directory of a plugin package") == true)
    }

    @Test func aPackageWithoutADynamicLibraryIsRefused() throws {
        let dir = try TemporaryDirectory()
        try dir.write(Data("""
            // swift-tools-version: 6.0
            import PackageDescription
            let package = Package(
                name: "NotAPlugin",
                products: [.library(name: "NotAPlugin", targets: ["NotAPlugin"])],
                targets: [.target(name: "NotAPlugin")])
            """.utf8), as: "Package.swift")
        try FileManager.default.createDirectory(atPath: dir.file("Sources/NotAPlugin"), withIntermediateDirectories: true)
        _ = try dir.write(Data("public let x = 1\n".utf8), as: "Sources/NotAPlugin/x.swift")
        let failure = #expect(throws: PackageBuilder.Failure.self) { try PackageBuilder(packageDirectory: dir.path) }
        #expect(failure?.code == .noDynamicLibrary, "\(String(describing: failure))")
    }

    @Test func aManifestThatDoesNotCompileIsASwiftFailureWithItsMessage() throws {
        let dir = try TemporaryDirectory()
        try dir.write(Data("// swift-tools-version: 6.0\nthis is not swift\n".utf8), as: "Package.swift")
        let failure = #expect(throws: PackageBuilder.Failure.self) { try PackageBuilder(packageDirectory: dir.path) }
        #expect(failure?.code == .swiftFailed)
        // The compiler's own diagnostic, naming the manifest.
        #expect(failure?.reason.contains("Package.swift") == true, "\(String(describing: failure))")
    }
}
