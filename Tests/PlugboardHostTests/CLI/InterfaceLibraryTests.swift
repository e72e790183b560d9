import Foundation
import PlugboardHost
import Testing

extension SwiftPMBuilding {
    /// A host's own extension point, in an interface package of its own (made by
    /// `plugboard new --interface`), and a plugin that provides it: the
    /// `plugboard` tool links no such library, so it finds it in the plugins
    /// directory's `lib/` folder and lists it as what it is. (This is also the
    /// test of `plugboard new --interface`: the scaffold builds as a dynamic library.)
    @Suite(.serialized) struct InterfaceLibraryTests {
        /// The interface and the plugin build in one folder, as the
        /// plugin's own build would hold both: the SDK compiles once.
        func swiftBuild(_ package: String, in builds: String) throws -> ProcessResult {
            try runProcess(URL(fileURLWithPath: "/usr/bin/env"), ["swift", "build", "--package-path", package, "--scratch-path", builds])
        }

        @Test func pluginsOfACustomInterfaceLoadWhenItsLibraryIsInLib() throws {
            let work = try TemporaryDirectory("plugboard-interface")
            let sdk = Fixtures.repository.appendingPathComponent("SDK").path
            let created = try runProcess(
                Fixtures.executable("plugboard"),
                ["new", "Exporters", "--interface", "--id", "com.example.exporter", "--dir", work.path, "--sdk-path", sdk])
            #expect(created.status == 0, "\(created.stderr)")
            let interface = work.file("Exporters")
            let plugin = work.file("CSVExporter")
            // The plugin: scaffolded against the interface package, its provider written (`--uses-interface`).
            let scaffolded = try runProcess(
                Fixtures.executable("plugboard"),
                ["new", "CSVExporter", "--uses-interface", interface, "--id", "com.example.csv", "--dir", work.path, "--sdk-path", sdk])
            #expect(scaffolded.status == 0, "\(scaffolded.stderr)")
            #expect(scaffolded.stdout.contains("It provides Exporters of Exporters"), "\(scaffolded.stdout)")
            let builds = work.file("builds"), build = builds + "/debug"
            let builtInterface = try swiftBuild(interface, in: builds)
            #expect(builtInterface.status == 0, "\(builtInterface.stdout)\(builtInterface.stderr)")
            // The scaffold is a dynamic library with the id it was given.
            #expect(FileManager.default.fileExists(atPath: build + "/libExporters.so"))
            let source = try String(contentsOfFile: interface + "/Sources/Exporters/Exporters.swift", encoding: .utf8)
            #expect(source.contains("Interface(id: \"com.example.exporter\""))
            // Its point can run isolated (the build above compiled the conformance).
            #expect(source.contains("extension Exporters: IsolatableExtensionPoint"))
            let builtPlugin = try swiftBuild(plugin, in: builds)
            #expect(builtPlugin.status == 0, "\(builtPlugin.stdout)\(builtPlugin.stderr)")

            let plugins = try TemporaryDirectory()
            try plugins.copy(URL(fileURLWithPath: build + "/libCSVExporter.so"), as: "libCSVExporter.so")
            let cache = try TemporaryDirectory()
            var lastErrors = ""
            func list(_ extra: [String] = []) throws -> [String: Any] {
                let result = try runProcess(
                    Fixtures.executable("plugboard"), ["list", "--plugins", plugins.path, "--json", "--cache", cache.path, "--rescan"] + extra)
                #expect(result.status == 0, "\(result.stderr)")
                lastErrors = result.stderr
                return try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
            }
            func statuses(_ output: [String: Any]) -> [String] {
                (output["plugins"] as? [[String: Any]] ?? []).map { $0["code"] as? String ?? $0["status"] as? String ?? "" }
            }

            // Without lib/: the plugin's library is nowhere to be found.
            let without = try list()
            let missing = try #require((without["plugins"] as? [[String: Any]])?.first)
            #expect(missing["status"] as? String == "rejected")
            #expect(missing["code"] as? String == "load-failed")
            #expect((missing["reason"] as? String)?.contains("libExporters.so") == true, "\(missing)")
            #expect((missing["reason"] as? String)?.contains("goes in the lib/ folder of the plugins directory") == true, "\(missing)")

            // With it in lib/: the plugin is available, and the library is not listed as a plugin.
            try FileManager.default.createDirectory(atPath: plugins.file("lib"), withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: build + "/libExporters.so", toPath: plugins.file("lib/libExporters.so"))
            let with = try list()
            let records = try #require(with["plugins"] as? [[String: Any]])
            #expect(records.count == 1)
            #expect(records.first?["status"] as? String == "available", "\(records)")
            #expect(records.first?["id"] as? String == "com.example.csv")
            let libraries = (with["discovery"] as? [String: Any])?["interfaceLibraries"] as? [String]
            #expect(libraries?.map { URL(fileURLWithPath: $0).lastPathComponent } == ["libExporters.so"])

            // inspect gives list's answer: it uses the lib/ beside the file.
            let inspected = try runProcess(
                Fixtures.executable("plugboard"), ["inspect", plugins.file("libCSVExporter.so"), "--json", "--cache", cache.path, "--rescan"])
            #expect(inspected.status == 0, "\(inspected.stdout)\(inspected.stderr)")
            let inspectedRecord = try #require(try JSONSerialization.jsonObject(with: Data(inspected.stdout.utf8)) as? [String: Any])
            #expect(inspectedRecord["status"] as? String == "available", "\(inspectedRecord)")

            // The plugin author's path: the build folder itself, where the
            // interface library lies beside the plugin. It is installed, not
            // listed as a rejected plugin, and the plugin loads; again warm.
            for pass in ["cold", "warm"] {
                let listed = try runProcess(
                    Fixtures.executable("plugboard"), ["list", "--plugins", build, "--json", "--cache", cache.file("build-folder")])
                #expect(listed.status == 0, "\(pass): \(listed.stderr)")
                let output = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [String: Any])
                let rows = output["plugins"] as? [[String: Any]] ?? []
                #expect(rows.map { URL(fileURLWithPath: $0["path"] as? String ?? "").lastPathComponent } == ["libCSVExporter.so"], "\(pass): \(rows)")
                #expect(statuses(output) == ["available"], "\(pass): \(rows)")
                let installed = (output["discovery"] as? [String: Any])?["interfaceLibraries"] as? [String]
                #expect(installed?.map { URL(fileURLWithPath: $0).lastPathComponent } == ["libExporters.so"], "\(pass)")
            }

            // Locked: the library is recorded with its hash, and a locked host loads the plugin.
            let locked = try runProcess(Fixtures.executable("plugboard"), ["lock", "--plugins", plugins.path, "--cache", cache.path])
            #expect(locked.status == 0, "\(locked.stderr)")
            #expect(locked.stdout.contains("Locked 1 plugin and 1 interface library"), "\(locked.stdout)")
            #expect(try LockFile.load(LockFile.defaultPath(for: plugins.path)).libraries.map(\.file) == ["libExporters.so"])
            #expect(statuses(try list(["--locked"])) == ["available"])

            // A changed library is refused under the lock: never copied where the
            // plugin would find it, so the plugin cannot load (nothing of it ran).
            let library = plugins.file("lib/libExporters.so")
            let original = try Data(contentsOf: URL(fileURLWithPath: library))
            try (original + Data([0])).write(to: URL(fileURLWithPath: library))
            #expect(statuses(try list(["--locked"])) == ["load-failed"])
            #expect(lastErrors.contains("\(library): interface library refused") && lastErrors.contains("[lock-hash-mismatch]"), "\(lastErrors)")
            // An added one, unlisted, too.
            try original.write(to: URL(fileURLWithPath: library))
            try original.write(to: URL(fileURLWithPath: plugins.file("lib/libExtra.so")))
            #expect(statuses(try list(["--locked"])) == ["available"])
            #expect(lastErrors.contains("libExtra.so: interface library refused") && lastErrors.contains("[not-locked]"), "\(lastErrors)")

            // `install` checks the file against the destination's lib/, not
            // the folder it comes from; a refused library is named.
            let destination = try TemporaryDirectory()
            try FileManager.default.createDirectory(atPath: destination.file("lib"), withIntermediateDirectories: true)
            func install() throws -> ProcessResult {
                try runProcess(Fixtures.executable("plugboard"), ["install", build + "/libCSVExporter.so", "--plugins", destination.path, "--cache", cache.path])
            }
            try FileManager.default.createSymbolicLink(atPath: destination.file("lib/libExporters.so"), withDestinationPath: build + "/libExporters.so")
            let linked = try install()
            #expect(linked.status == 1 && linked.stderr.contains("interface library refused [untrusted-symlink]"), "\(linked.stdout)\(linked.stderr)")
            try FileManager.default.removeItem(atPath: destination.file("lib/libExporters.so"))
            try FileManager.default.copyItem(atPath: build + "/libExporters.so", toPath: destination.file("lib/libExporters.so"))
            let installed = try install()
            #expect(installed.status == 0, "\(installed.stdout)\(installed.stderr)")
            #expect(FileManager.default.fileExists(atPath: destination.file("libCSVExporter.so")))
        }
    }
}
