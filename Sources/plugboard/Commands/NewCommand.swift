import PlugboardCommandLine
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import PlugboardHost

/// `plugboard new NAME`: scaffolds a plugin package, ready for `plugboard dev`,
/// or with `--interface` an interface package.
enum NewCommand: CLICommand {
    static let spec = CommandSpec(
        name: "new",
        abstract: "Create a plugin package (one command, its entry point, a passing test) or, with --interface, an interface package.",
        discussion: """
        Writes DIR/NAME (default ./NAME): a SwiftPM package with one .dynamic library product (the \
        plugin) and a test target that tests it with the SDK's PluginHarness. `swift build` then \
        builds it, `swift test` tests it, and `plugboard dev DIR/NAME` loads it and reloads it on \
        every save. With --interface, writes an interface package instead (no test target): the \
        dynamic library a host publishes its own extension points in. Either package depends on the \
        SDK by URL and version with --sdk-url (or $PLUGBOARD_SDK_URL), else by path (--sdk-path, \
        default: the SDK next to this tool's checkout). An interface package must take the SDK the \
        way its host and plugins do (--sdk-url beside their URL dependencies), or SwiftPM finds two \
        packages declaring a product named Plugboard. With --uses-interface PATH, the plugin also \
        depends on the interface package at PATH and provides its extension points (a provider \
        written for each whose protocol asks only for a name, a note for the others). \
        Exits 0 when written, 1 if the directory exists or cannot be written, 64 on wrong usage.
        """,
        options: [
            .init(long: "--dir", valueName: "dir", help: "Where to create the package (default: the current directory)."),
            .init(long: "--id", valueName: "id", help: "Reverse-DNS plugin or interface id (default: com.example.<name>)."),
            .init(long: "--sdk-url", valueName: "url", help: "Depend on the SDK by this URL and this tool's SDK version (default: $PLUGBOARD_SDK_URL)."),
            .init(long: "--sdk-path", valueName: "path", help: "Depend on the SDK package at this path (default: the SDK next to this tool's checkout)."),
            .init(long: "--sdk", valueName: "path", help: "Same as --sdk-path."),
            .init(long: "--interface", help: "Write an interface package (a host's extension point) instead of a plugin."),
            .init(long: "--uses-interface", valueName: "path", help: "The plugin depends on the interface package at PATH and provides its points."),
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
        let sdk: SDKDependency
        if let url = arguments.value("--sdk-url") ?? ProcessInfo.processInfo.environment["PLUGBOARD_SDK_URL"].flatMap({ $0.isEmpty ? nil : $0 }) {
            sdk = .url(url, version: PluginHost().baseline.sdkVersion)
        } else {
            guard let path = (arguments.value("--sdk-path") ?? arguments.value("--sdk")).map(absolute) ?? defaultSDK() else {
                throw UsageError(
                    message: "cannot find Plugboard's SDK next to this tool; pass --sdk-url URL or --sdk-path /path/to/plugboard/SDK",
                    command: spec.name)
            }
            guard FileManager.default.fileExists(atPath: path + "/Package.swift") else {
                throw UsageError(message: "\(path) is not the SDK package (no Package.swift)", command: spec.name)
            }
            sdk = .path(path)
        }
        let root = absolute(arguments.value("--dir") ?? ".") + "/" + name
        guard !FileManager.default.fileExists(atPath: root) else {
            Terminal.error("\(root) already exists; choose another name or --dir")
            return ExitStatus.failure
        }
        let interface = arguments.flag("--interface")
        let used = try arguments.value("--uses-interface").map { path throws(UsageError) -> UsedInterface in
            guard !interface else { throw UsageError(message: "--uses-interface is for a plugin, not with --interface", command: spec.name) }
            return try UsedInterface.read(absolute(path), command: spec.name)
        }
        do {
            try FileManager.default.createDirectory(atPath: root + "/Sources/\(name)", withIntermediateDirectories: true)
            try ".build/\n.swiftpm/\nPackage.resolved\n".write(toFile: root + "/.gitignore", atomically: true, encoding: .utf8)
            if interface {
                try ScaffoldTemplates.interfaceManifest(name: name, sdk: sdk).write(toFile: root + "/Package.swift", atomically: true, encoding: .utf8)
                try ScaffoldTemplates.interfaceSource(name: name, id: id)
                    .write(toFile: root + "/Sources/\(name)/\(name).swift", atomically: true, encoding: .utf8)
            } else {
                try FileManager.default.createDirectory(atPath: root + "/Tests/\(name)Tests", withIntermediateDirectories: true)
                try ScaffoldTemplates.manifest(name: name, sdk: sdk, uses: used).write(toFile: root + "/Package.swift", atomically: true, encoding: .utf8)
                try ScaffoldTemplates.source(name: name, id: id, uses: used)
                    .write(toFile: root + "/Sources/\(name)/\(name).swift", atomically: true, encoding: .utf8)
                try ScaffoldTemplates.test(name: name, id: id, uses: used)
                    .write(toFile: root + "/Tests/\(name)Tests/\(name)Tests.swift", atomically: true, encoding: .utf8)
            }
        } catch {
            Terminal.error("cannot write \(root): \(error)")
            return ExitStatus.failure
        }
        Terminal.write(interface ? """
        Created interface package \(id) in \(root) (SDK \(sdk.description))
        Hosts and plugins depend on its product \(name) (a dynamic library); the host links it.
        For a host that does not, such as the plugboard tool, put lib\(name).so in the plugins directory's lib/.
        Next:
          swift build --package-path \(root)

        """ : """
        Created plugin \(id) in \(root) (SDK \(sdk.description))\(used.map { used in
            "\nIt provides " + used.points.map { $0.nameOnly ? $0.point : "\($0.point) (write its provider: see the note in the source)" }.joined(separator: ", ")
                + " of \(used.module); a host without \(used.product) linked needs lib\(used.product).so in its plugins directory's lib/."
        } ?? "")
        Next:
          swift test --package-path \(root)     # its test, with PluginHarness
          plugboard dev \(root)                  # build, load, and reload on every save
          swift build --package-path \(root) && plugboard list --plugins \(root)/.build/debug

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
}
