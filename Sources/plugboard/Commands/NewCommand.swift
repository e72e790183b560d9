import Foundation

/// `plugboard new NAME`: scaffolds a plugin package, ready for `plugboard dev`.
enum NewCommand: CLICommand {
    static let spec = CommandSpec(
        name: "new",
        abstract: "Create a new plugin package (Package.swift, a plugin with one command, its entry point).",
        discussion: """
        Writes DIR/NAME (default ./NAME): a SwiftPM package depending on the SDK by path, with one \
        .dynamic library product. Then: `plugboard dev DIR/NAME` builds it, loads it and reloads it \
        on every save. Exits 0 when written, 1 if the directory exists or cannot be written, 64 on \
        wrong usage.
        """,
        options: [
            .init(long: "--dir", valueName: "dir", help: "Where to create the package (default: the current directory)."),
            .init(long: "--id", valueName: "id", help: "Reverse-DNS plugin id (default: com.example.<name>)."),
            .init(long: "--sdk", valueName: "path", help: "Path of Plugboard's SDK package (default: the SDK next to this tool's checkout)."),
        ],
        positionals: [.init(name: "name", help: "Package and type name: letters and digits, starting with a letter.")])

    static func run(_ arguments: ParsedArguments) throws(UsageError) -> Int32 {
        let name = arguments.positionals[0]
        guard let first = name.first, first.isASCII, first.isLetter, name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else {
            throw UsageError(message: "'\(name)' is not a usable name: letters and digits, starting with a letter", command: spec.name)
        }
        let id = arguments.value("--id") ?? "com.example.\(name.lowercased())"
        let labels = id.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count >= 2, labels.allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") } }) else {
            throw UsageError(message: "'\(id)' is not a reverse-DNS id like com.example.tool", command: spec.name)
        }
        guard let sdk = arguments.value("--sdk").map(absolute) ?? defaultSDK() else {
            throw UsageError(message: "cannot find Plugboard's SDK next to this tool; pass --sdk /path/to/plugboard/SDK", command: spec.name)
        }
        guard FileManager.default.fileExists(atPath: sdk + "/Package.swift") else {
            throw UsageError(message: "\(sdk) is not the SDK package (no Package.swift)", command: spec.name)
        }
        let root = absolute(arguments.value("--dir") ?? ".") + "/" + name
        guard !FileManager.default.fileExists(atPath: root) else {
            Terminal.error("\(root) already exists; choose another name or --dir")
            return ExitStatus.failure
        }
        do {
            try FileManager.default.createDirectory(atPath: root + "/Sources/\(name)", withIntermediateDirectories: true)
            try manifest(name: name, sdk: sdk).write(toFile: root + "/Package.swift", atomically: true, encoding: .utf8)
            try source(name: name, id: id).write(toFile: root + "/Sources/\(name)/\(name).swift", atomically: true, encoding: .utf8)
            try ".build/\n.swiftpm/\nPackage.resolved\n".write(toFile: root + "/.gitignore", atomically: true, encoding: .utf8)
        } catch {
            Terminal.error("cannot write \(root): \(error)")
            return ExitStatus.failure
        }
        Terminal.write("""
        Created plugin \(id) in \(root)
        Next:
          plugboard dev \(root)        # build, load, and reload on every save
          swift build --package-path \(root) && plugboard inspect \(root)/.build/debug/lib\(name).so

        """)
        return ExitStatus.success
    }

    private static func absolute(_ path: String) -> String {
        URL(fileURLWithPath: path).standardizedFileURL.path
    }

    /// `<checkout>/SDK` when the tool runs from `<checkout>/.build/<config>/plugboard`.
    private static func defaultSDK() -> String? {
        let tool = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        var directory = tool.deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("SDK/Package.swift").path
            if FileManager.default.fileExists(atPath: candidate) { return directory.appendingPathComponent("SDK").path }
            directory = directory.deletingLastPathComponent()
        }
        return nil
    }

    static func manifest(name: String, sdk: String) -> String {
        """
        // swift-tools-version: 6.0
        // A Plugboard plugin: one dynamic library, depending on the SDK only.
        import PackageDescription

        let package = Package(
            name: "\(name)",
            products: [
                .library(name: "\(name)", type: .dynamic, targets: ["\(name)"])
            ],
            dependencies: [
                .package(path: "\(sdk)")
            ],
            targets: [
                .target(
                    name: "\(name)",
                    dependencies: [.product(name: "Plugboard", package: "SDK")],
                    swiftSettings: [.swiftLanguageMode(.v6)]
                )
            ]
        )

        """
    }

    static func source(name: String, id: String) -> String {
        let command = name.lowercased()
        return """
        import Plugboard

        /// The plugin: the host creates it once per load and asks for its providers.
        final class \(name): Plugin {
            static let defaultConfiguration: [String: ConfigValue] = ["greeting": .string("Hello")]

            let greeting: String

            init(context: PluginContext) throws {
                greeting = try context.service(Services.Configuration.self).string("greeting") ?? "Hello"
            }

            func contributions() -> [Contribution] {
                [.provider(\(name)Command(greeting: greeting), for: Commands.self)]
            }
        }

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
                provides: [Commands.interface],
                services: [Services.Configuration.id])
        }

        """
    }
}
