/// How a scaffolded package depends on the SDK.
enum SDKDependency: CustomStringConvertible {
    /// By URL and version: the package identity is the URL's last component.
    case url(String, version: String)
    /// By path, for local work: the identity is the folder's name.
    case path(String)

    var packageLine: String {
        switch self {
        case let .url(url, version): ".package(url: \"\(url)\", from: \"\(version)\")"
        case let .path(path): ".package(path: \"\(path)\")"
        }
    }

    /// What `.product(name:package:)` calls the SDK package.
    var identity: String {
        let location: String
        switch self {
        case let .url(url, _): location = url
        case let .path(path): location = path
        }
        var last = location.split(separator: "/").last.map(String.init) ?? location
        if last.hasSuffix(".git") { last.removeLast(4) }
        return last
    }

    var description: String {
        switch self {
        case let .url(url, version): "\(url) from \(version)"
        case let .path(path): "at \(path)"
        }
    }
}

/// The files `plugboard new` writes.
enum ScaffoldTemplates {
    /// A package with one dynamic library depending on the SDK and, for a
    /// plugin, a test target.
    static func manifest(
        name: String, sdk: SDKDependency, tests: Bool = true, uses interface: UsedInterface? = nil,
        purpose: String = "// A Plugboard plugin: one dynamic library, depending on the SDK only."
    ) -> String {
        let used = interface.map { ", .product(name: \"\($0.product)\", package: \"\($0.identity)\")" } ?? ""
        let testTarget = !tests ? "" : """
                    // Tests with the SDK's PluginHarness: no host needed.
                    .testTarget(
                        name: "\(name)Tests",
                        dependencies: ["\(name)", .product(name: "Plugboard", package: "\(sdk.identity)")\(used)],
                        swiftSettings: [.swiftLanguageMode(.v6)]
                    ),

            """
        let purpose = interface.map { "// A Plugboard plugin: one dynamic library, depending on the SDK and the\n// interface package at \($0.path), whose points it provides." } ?? purpose
        return """
        // swift-tools-version: 6.0
        \(purpose)
        import PackageDescription

        let package = Package(
            name: "\(name)",
            products: [
                .library(name: "\(name)", type: .dynamic, targets: ["\(name)"])
            ],
            dependencies: [
                \(sdk.packageLine)\(interface.map { ",\n        .package(path: \"\($0.path)\")" } ?? "")
            ],
            targets: [
                .target(
                    name: "\(name)",
                    dependencies: [.product(name: "Plugboard", package: "\(sdk.identity)")\(used)],
                    swiftSettings: [.swiftLanguageMode(.v6)]
                ),
        \(testTarget)    ]
        )

        """
    }

    static func source(name: String, id: String, uses interface: UsedInterface? = nil) -> String {
        let command = name.lowercased()
        let points = interface?.points ?? []
        let written = points.filter(\.nameOnly)
        let contributions = ["[.provider(\(name)Command(greeting: greeting), for: Commands.self)"]
            + written.map { ".provider(\(name)\($0.point)(), for: \($0.point).self)" }
        let providers = written.map { point in
            """

            /// A provider of \(point.point), from the interface package \(interface?.module ?? "").
            struct \(name)\(point.point): \(point.provider) {
                let name = "\(command)"
            }

            """
        }.joined()
        let unwritten = points.filter { !$0.nameOnly }.map { point in
            """

            // Provide \(point.point): a type conforming to \(point.provider), contributed as
            // `.provider(MyProvider(), for: \(point.point).self)`, and `\(point.point).interface` in `provides:`.

            """
        }.joined()
        let provides = (["Commands.interface"] + written.map { "\($0.point).interface" }).joined(separator: ", ")
        return """
        \(interface.map { "import \($0.module)\n" } ?? "")import Plugboard

        /// The plugin: the host creates it once per load and asks for its providers.
        final class \(name): Plugin {
            static let defaultConfiguration: [String: ConfigValue] = ["greeting": .string("Hello")]

            let greeting: String

            init(context: PluginContext) throws {
                greeting = try context.service(Services.Configuration.self).string("greeting") ?? "Hello"
            }

            func contributions() -> [Contribution] {
                \(contributions.joined(separator: ",\n         "))]
            }
        }
        \(providers)\(unwritten)
        /// `\(command) [NAME]`
        struct \(name)Command: Command {
            let greeting: String
            let name = "\(command)"
            let summary = "Says hello from \(name)"

            func run(arguments: [String]) throws -> String {
                "\\(greeting) from \(name), \\(arguments.first ?? "world")!"
            }
        }

        /// The one symbol the host looks for.
        @_cdecl("plugboard_entry")
        public func plugboardEntry() -> UnsafeRawPointer {
            PluginExport.descriptor(
                for: \(name).self, id: "\(id)", version: "0.1.0",
                provides: [\(provides)],
                services: [Services.Configuration.id])
        }

        """
    }

    static func test(name: String, id: String, uses interface: UsedInterface? = nil) -> String {
        let command = name.lowercased()
        let pointTests = (interface?.points ?? []).filter(\.nameOnly).map { point in
            """

                @Test func provides\(point.point)() throws {
                    let harness = try PluginHarness(\(name).self, id: "\(id)")
                    try harness.activate()
                    #expect(harness.providers(of: \(point.point).self).map(\\.name) == ["\(command)"])
                }

            """
        }.joined()
        return """
        \(interface.map { "import \($0.module)\n" } ?? "")import Plugboard
        import Testing
        @testable import \(name)

        @Suite struct \(name)Tests {
            @Test func greets() throws {
                let harness = try PluginHarness(\(name).self, id: "\(id)")
                try harness.activate()
                let command = try #require(harness.providers(of: Commands.self).first)
                #expect(command.name == "\(command)")
                #expect(try command.run(arguments: ["Ada"]) == "Hello from \(name), Ada!")
            }

            @Test func usesTheConfiguredGreeting() throws {
                let harness = try PluginHarness(\(name).self, configuration: ["greeting": .string("Howdy")])
                let command = try #require(harness.providers(of: Commands.self).first)
                #expect(try command.run(arguments: []) == "Howdy from \(name), world!")
            }
        \(pointTests)}

        """
    }

    /// An interface package: ``manifest(name:sdk:tests:purpose:)`` without a
    /// test target, so it depends on the SDK exactly as a plugin scaffold does.
    static func interfaceManifest(name: String, sdk: SDKDependency) -> String {
        manifest(name: name, sdk: sdk, tests: false, purpose: """
            // A host's own extension points, published for its plugins: one dynamic
            // library (one copy in the process, shared by the host and every plugin),
            // depending on the SDK only. The host and the plugins depend on its
            // product; the host links it (or, if it does not, finds it in its
            // plugins directory's lib/), so the plugins' references resolve to it.
            """)
    }

    static func interfaceSource(name: String, id: String) -> String {
        """
        import Plugboard

        /// What a provider of this extension point does. Change it only as the
        /// interface's version allows: a new requirement is a new major.
        public protocol \(name)Provider: Sendable {
            /// A name the host lists the provider by.
            var name: String { get }
        }

        /// The extension point: the host declares it with `host.declare(\(name).self)`;
        /// a plugin lists `\(name).interface` in `provides:` and contributes
        /// `.provider(..., for: \(name).self)`.
        public enum \(name): ExtensionPoint {
            public typealias Provider = any \(name)Provider
            /// Inlined into each plugin, so it records the version it was compiled against.
            @_alwaysEmitIntoClient
            public static var interface: Interface { Interface(id: "\(id)", version: SemanticVersion(1, 0)) }
        }

        /// Its providers can run in a child process of their own (isolated or
        /// sandboxed, docs/isolation.md). The host-side proxy answers `name`
        /// from the profile. A requirement you add that does work becomes a
        /// method: the proxy calls `isolated.call("method", arguments,
        /// returning: Result.self)` (`try await isolated.suspendingCall(...)`
        /// for an `async` requirement), and `serve(_:on:)` answers it in the child
        /// (`case "method": try call.reply(provider.method(call.arguments(...)))`).
        extension \(name): IsolatableExtensionPoint {
            public struct Profile: Codable, Sendable {
                public var name: String
            }

            public static func profile(of provider: any \(name)Provider) -> Profile {
                Profile(name: provider.name)
            }

            public static func proxy(_ isolated: any IsolatedProvider, profile: Profile) -> any \(name)Provider {
                Isolated\(name)Provider(isolated: isolated, profile: profile)
            }

            public static func serve(_ call: any IsolatedCall, on provider: any \(name)Provider) async throws {
                // No requirement does work yet: every method is unknown.
                try call.replyUnknownMethod()
            }
        }

        /// The host's side of an isolated provider.
        private struct Isolated\(name)Provider: \(name)Provider {
            let isolated: any IsolatedProvider
            let profile: \(name).Profile
            var name: String { profile.name }
        }

        """
    }
}
