import Foundation
import PlugboardHost
import Synchronization
import Testing

extension SwiftPMBuilding {
    /// Plugboard consumed the way Swift packages are: by URL and version only.
    /// `.ci/release` makes the SDK and host repositories from this checkout and
    /// tags them; a host app and a plugin in folders of their own depend on them
    /// by `file://` URL and `from:` version, build, and the app loads the plugin.
    @Suite(.serialized) struct ReleaseTests {
        static let version: String = {
            let header = Fixtures.repository.appendingPathComponent("SDK/Sources/CPlugboard/include/plugboard.h")
            let text = (try? String(contentsOf: header, encoding: .utf8)) ?? ""
            let line = text.split(separator: "\n").first { $0.hasPrefix("#define PLUGBOARD_SDK_VERSION ") } ?? ""
            return line.split(separator: "\"").dropFirst().first.map(String.init) ?? "?"
        }()

        func swift(_ arguments: [String], in directory: String) throws -> ProcessResult {
            try runProcess(URL(fileURLWithPath: "/usr/bin/env"), ["swift"] + arguments + ["--package-path", directory])
        }

        /// One release for the suite, and one build folder for its host apps:
        /// the host library by URL compiles once, not once per app (the apps'
        /// own targets still build apart). Made by the first test that asks.
        /// It lives under the checkout's `.build` (ignored by git) for the
        /// whole run, not in a temporary folder a test removes; the next run
        /// removes it.
        final class Shared: Sendable {
            let repos: String
            let release: ProcessResult
            /// The host apps' `--scratch-path`.
            let appBuilds: String

            init() throws {
                let root = Fixtures.repository.appendingPathComponent(".build/release-tests").path
                try? FileManager.default.removeItem(atPath: root)
                try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
                repos = root + "/repos"
                release = try runProcess(URL(fileURLWithPath: "/bin/sh"), [Fixtures.repository.appendingPathComponent(".ci/release").path, repos])
                appBuilds = root + "/app-builds"
            }
        }

        static let shared = Mutex<Shared?>(nil)

        func shared() throws -> Shared {
            try Self.shared.withLock { shared in
                if let made = shared { return made }
                let made = try Shared()
                shared = made
                return made
            }
        }

        /// Builds a host app in the suite's shared build folder.
        func buildApp(_ app: String, _ shared: Shared) throws -> (result: ProcessResult, binary: String) {
            let result = try swift(["build", "--scratch-path", shared.appBuilds], in: app)
            return (result, shared.appBuilds + "/debug/" + URL(fileURLWithPath: app).lastPathComponent)
        }

        @Test func aHostAppAndAPluginDependingByURLAndVersionBuildAndLoad() throws {
            let shared = try shared()
            let work = try TemporaryDirectory("plugboard-release-app")
            let repos = shared.repos
            #expect(shared.release.status == 0, "\(shared.release.stderr)")
            #expect(try runProcess(URL(fileURLWithPath: "/usr/bin/env"), ["git", "-C", repos + "/plugboard-sdk", "tag"]).stdout == "\(Self.version)\n")
            // The host library has a version of its own.
            #expect(try runProcess(URL(fileURLWithPath: "/usr/bin/env"), ["git", "-C", repos + "/plugboard", "tag"]).stdout == "\(PluginHost.libraryVersion)\n")

            // The app and the plugin live in folders named as their authors like.
            let app = work.file("MyHostApp"), plugin = work.file("hello-plugin")
            try FileManager.default.createDirectory(atPath: app + "/Sources/MyHostApp", withIntermediateDirectories: true)
            try FileManager.default.createDirectory(atPath: plugin + "/Sources/Hello", withIntermediateDirectories: true)
            try """
                // swift-tools-version: 6.0
                import PackageDescription
                let package = Package(
                    name: "MyHostApp",
                    dependencies: [
                        .package(url: "file://\(repos)/plugboard", from: "\(PluginHost.libraryVersion)"),
                        .package(url: "file://\(repos)/plugboard-sdk", from: "\(Self.version)"),
                    ],
                    targets: [
                        .executableTarget(name: "MyHostApp", dependencies: [
                            .product(name: "PlugboardHost", package: "plugboard"),
                            .product(name: "Plugboard", package: "plugboard-sdk"),
                        ])
                    ]
                )
                """.write(toFile: app + "/Package.swift", atomically: true, encoding: .utf8)
            try """
                import Plugboard
                import PlugboardHost

                var configuration = PluginHost.Configuration(pluginsDirectory: CommandLine.arguments[1])
                if CommandLine.arguments.count > 2 { configuration.isolation.others = .isolated }
                let host = PluginHost(configuration: configuration)
                host.declare(Commands.self)
                _ = try host.start()
                for record in host.records where record.error != nil { print(record.error!.message) }
                let commands = host.registry.handle(for: Commands.self)
                print(try commands.withFirst { try $0.run(arguments: ["Ada"]) } ?? "no command")
                host.shutdown()
                """.write(toFile: app + "/Sources/MyHostApp/main.swift", atomically: true, encoding: .utf8)
            try """
                // swift-tools-version: 6.0
                import PackageDescription
                let package = Package(
                    name: "Hello",
                    products: [.library(name: "Hello", type: .dynamic, targets: ["Hello"])],
                    dependencies: [.package(url: "file://\(repos)/plugboard-sdk", from: "\(Self.version)")],
                    targets: [.target(name: "Hello", dependencies: [.product(name: "Plugboard", package: "plugboard-sdk")])]
                )
                """.write(toFile: plugin + "/Package.swift", atomically: true, encoding: .utf8)
            try """
                import Plugboard

                final class Hello: Plugin {
                    init(context: PluginContext) throws {}
                    func contributions() -> [Contribution] { [.provider(Greet(), for: Commands.self)] }
                }

                struct Greet: Command {
                    var name: String { "greet" }
                    var summary: String { "Says hello" }
                    func run(arguments: [String]) throws -> String { "Hello by URL, \\(arguments.first ?? "world")!" }
                }

                @_cdecl("plugboard_entry")
                public func plugboardEntry() -> UnsafeRawPointer {
                    PluginExport.descriptor(for: Hello.self, id: "com.example.hello", version: "1.0.0", provides: [Commands.interface])
                }
                """.write(toFile: plugin + "/Sources/Hello/Hello.swift", atomically: true, encoding: .utf8)

            // One build at a time: they share the machine's cores.
            // The plugin in the apps' build folder too: the SDK by URL compiles once.
            let builtPlugin = try swift(["build", "--scratch-path", shared.appBuilds], in: plugin)
            #expect(builtPlugin.status == 0, "\(builtPlugin.stdout)\(builtPlugin.stderr)")
            let (builtApp, appBinary) = try buildApp(app, shared)
            #expect(builtApp.status == 0, "\(builtApp.stdout)\(builtApp.stderr)")
            let resolved = try String(contentsOfFile: app + "/Package.resolved", encoding: .utf8)
            #expect(resolved.contains("\"version\" : \"\(Self.version)\""), "the SDK resolved by version: \(resolved)")
            #expect(resolved.contains("\"version\" : \"\(PluginHost.libraryVersion)\""), "the host resolved by version: \(resolved)")

            let plugins = try TemporaryDirectory()
            try plugins.copy(URL(fileURLWithPath: shared.appBuilds + "/debug/libHello.so"), as: "libHello.so")
            let run = try runProcess(
                URL(fileURLWithPath: appBinary), [plugins.path], environment: ["XDG_CACHE_HOME": work.file("cache")])
            #expect(run.status == 0, "\(run.stderr)")
            #expect(run.stdout == "Hello by URL, Ada!\n", "\(run.stdout)\(run.stderr)")
            // Isolated: in plugboard-child, which SwiftPM built beside the app
            // because the host library depends on it.
            #expect(FileManager.default.isExecutableFile(atPath: URL(fileURLWithPath: appBinary).deletingLastPathComponent().path + "/plugboard-child"))
            let isolated = try runProcess(
                URL(fileURLWithPath: appBinary), [plugins.path, "isolated"], environment: ["XDG_CACHE_HOME": work.file("cache")])
            #expect(isolated.status == 0 && isolated.stdout == "Hello by URL, Ada!\n", "\(isolated.stdout)\(isolated.stderr)")

            // `plugboard new` with the SDK's URL: a package that depends by URL and
            // version, builds and passes its own test on the first try.
            let scaffolded = try runProcess(
                Fixtures.executable("plugboard"), ["new", "Greeting", "--dir", work.path, "--sdk-url", "file://\(repos)/plugboard-sdk"])
            #expect(scaffolded.status == 0, "\(scaffolded.stderr)")
            let manifest = try String(contentsOfFile: work.file("Greeting/Package.swift"), encoding: .utf8)
            #expect(manifest.contains(".package(url: \"file://\(repos)/plugboard-sdk\", from: \"\(Self.version)\")"), "\(manifest)")
            let tested = try swift(["test", "--scratch-path", shared.appBuilds], in: work.file("Greeting"))
            #expect(tested.status == 0, "\(tested.stdout)\(tested.stderr)")
        }

        /// The README's host-author path, typed as written: the host by URL and
        /// version, an interface package made by `plugboard new --interface
        /// --sdk-url`, a plugin of it, the interface library in `lib/` for the
        /// `plugboard` tool; the host app builds (no second package declaring a
        /// `Plugboard` product), and the app, `list` and `inspect` agree.
        @Test func theREADMEsHostAuthorPathWorksTypedLiterally() throws {
            let shared = try shared()
            let work = try TemporaryDirectory("plugboard-readme-host")
            let repos = shared.repos
            #expect(shared.release.status == 0, "\(shared.release.stderr)")
            let sdkURL = "file://\(repos)/plugboard-sdk"

            let created = try runProcess(
                Fixtures.executable("plugboard"),
                ["new", "Exporters", "--interface", "--id", "com.example.exporter", "--dir", work.path, "--sdk-url", sdkURL])
            #expect(created.status == 0, "\(created.stderr)")
            let interface = work.file("Exporters")
            let app = work.file("MyHost"), plugin = work.file("CSVExporter")
            try FileManager.default.createDirectory(atPath: app + "/Sources/MyHost", withIntermediateDirectories: true)
            // The README's manifest, plus the interface package the host links.
            try """
                // swift-tools-version: 6.0
                import PackageDescription
                let package = Package(
                    name: "MyHost",
                    dependencies: [
                        .package(url: "file://\(repos)/plugboard", from: "\(PluginHost.libraryVersion)"),
                        .package(url: "\(sdkURL)", from: "\(Self.version)"),
                        .package(path: "\(interface)"),
                    ],
                    targets: [
                        .executableTarget(name: "MyHost", dependencies: [
                            .product(name: "PlugboardHost", package: "plugboard"),
                            .product(name: "Plugboard", package: "plugboard-sdk"),
                            .product(name: "Exporters", package: "Exporters"),
                        ])
                    ]
                )
                """.write(toFile: app + "/Package.swift", atomically: true, encoding: .utf8)
            try """
                import Exporters
                import Plugboard
                import PlugboardHost

                let host = PluginHost(configuration: .init(pluginsDirectory: CommandLine.arguments[1]))
                host.declare(Exporters.self)
                try host.start()
                let names = host.registry.providers(of: Exporters.self).map(\\.name)  // activates the plugin
                for record in host.records { print(record.path.split(separator: "/").last!, record.code ?? record.status.rawValue) }
                print(names)
                host.shutdown()
                """.write(toFile: app + "/Sources/MyHost/main.swift", atomically: true, encoding: .utf8)
            try writeExporterPlugin(at: plugin, sdk: (".package(url: \"\(sdkURL)\", from: \"\(Self.version)\")", "plugboard-sdk"), interface: interface)

            // One build at a time: they share the machine's cores.
            let builtPlugin = try swift(["build"], in: plugin)
            #expect(builtPlugin.status == 0, "\(builtPlugin.stdout)\(builtPlugin.stderr)")
            let (builtApp, appBinary) = try buildApp(app, shared)
            #expect(builtApp.status == 0, "\(builtApp.stdout)\(builtApp.stderr)")

            let plugins = try TemporaryDirectory(), cache = try TemporaryDirectory()
            try plugins.copy(URL(fileURLWithPath: plugin + "/.build/debug/libCSVExporter.so"), as: "libCSVExporter.so")
            try FileManager.default.createDirectory(atPath: plugins.file("lib"), withIntermediateDirectories: true)
            // The interface library, built beside the plugin that depends on it.
            try plugins.copy(URL(fileURLWithPath: plugin + "/.build/debug/libExporters.so"), as: "lib/libExporters.so")
            chmod(plugins.file("lib"), 0o755)

            let run = try runProcess(
                URL(fileURLWithPath: appBinary), [plugins.path], environment: ["XDG_CACHE_HOME": cache.file("app")])
            #expect(run.status == 0, "\(run.stderr)")
            #expect(run.stdout == "libCSVExporter.so active\n[\"csv\"]\n", "\(run.stdout)\(run.stderr)")

            let list = try runProcess(Fixtures.executable("plugboard"), ["list", "--plugins", plugins.path, "--json", "--cache", cache.file("tool")])
            let listed = try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [String: Any]
            let listedRecord = (listed?["plugins"] as? [[String: Any]])?.first
            // inspect with a cache of its own, scanning and activating for itself (with the lib/ beside the file).
            let inspect = try runProcess(
                Fixtures.executable("plugboard"),
                ["inspect", plugins.file("libCSVExporter.so"), "--json", "--cache", cache.file("inspect"), "--rescan", "--activate"])
            let inspected = try JSONSerialization.jsonObject(with: Data(inspect.stdout.utf8)) as? [String: Any]
            #expect(listedRecord?["status"] as? String == "available", "\(list.stdout)\(list.stderr)")
            #expect(inspected?["status"] as? String == "active", "\(inspect.stdout)\(inspect.stderr)")
            #expect(inspect.status == 0)
        }

        /// The release ships what the package builds: every product of the
        /// development manifest (the host library, the dev loop, the demo's
        /// parts, `plugboard`, `plugboard-fleet`) is a product of the
        /// released repository, and SwiftPM loads that package whole (a
        /// target the release declares but did not copy fails to load). The
        /// app tests build the host library from it; building every product
        /// again here would compile the host a fifth time in `make test`.
        @Test func everyProductIsReleasedAndTheReleasedPackageLoads() throws {
            let shared = try shared()
            #expect(shared.release.status == 0, "\(shared.release.stderr)")
            let described = try runProcess(
                URL(fileURLWithPath: "/usr/bin/env"), ["swift", "package", "--package-path", shared.repos + "/plugboard", "describe", "--type", "json"])
            #expect(described.status == 0, "\(described.stderr)")
            let document = try JSONSerialization.jsonObject(with: Data(described.stdout.utf8)) as? [String: Any]
            let products = Set((document?["products"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String })
            let targets = (document?["targets"] as? [[String: Any]] ?? []).compactMap { $0["path"] as? String }
            for path in targets {
                #expect(FileManager.default.fileExists(atPath: shared.repos + "/plugboard/" + path), "\(path) is declared but not released")
            }
            let development = try String(contentsOf: Fixtures.repository.appendingPathComponent("Package.swift"), encoding: .utf8)
            for line in development.split(separator: "\n") where line.contains(".library(name: \"") || line.contains(".executable(name: \"") {
                let name = line.split(separator: "\"").dropFirst().first.map(String.init) ?? "?"
                #expect(products.contains(name), "\(name) is a product of Package.swift but not of the release")
            }
        }

        @Test func theReleaseScriptRefusesAUsedFolderAndBadUsage() throws {
            let work = try TemporaryDirectory("plugboard-release")
            let script = Fixtures.repository.appendingPathComponent(".ci/release").path
            #expect(try runProcess(URL(fileURLWithPath: "/bin/sh"), [script]).status == 64)
            #expect(try runProcess(URL(fileURLWithPath: "/bin/sh"), [script, work.path, "--bogus"]).status == 64)
            try FileManager.default.createDirectory(atPath: work.file("plugboard-sdk"), withIntermediateDirectories: true)
            let used = try runProcess(URL(fileURLWithPath: "/bin/sh"), [script, work.path])
            #expect(used.status == 1)
            #expect(used.stderr.contains("give an empty OUT"))
        }

        @Test(arguments: [["--help"], ["-h"], ["/tmp/unused-out", "--help"]])
        func theReleaseScriptHasHelp(_ arguments: [String]) throws {
            let script = Fixtures.repository.appendingPathComponent(".ci/release").path
            let help = try runProcess(URL(fileURLWithPath: "/bin/sh"), [script] + arguments)
            #expect(help.status == 0)
            #expect(help.stdout.contains("USAGE: .ci/release OUT [--sdk-url URL]"), "\(help.stdout)")
            #expect(help.stdout.contains("64 usage error"))
            #expect(!FileManager.default.fileExists(atPath: "/tmp/unused-out"), "help made nothing")
        }
    }
}
