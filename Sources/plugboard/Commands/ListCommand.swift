import Plugboard
import PlugboardHost

/// `plugboard list --plugins DIR [--json] [--strict]`
enum ListCommand: CLICommand {
    static let spec = CommandSpec(
        name: "list",
        abstract: "List every candidate plugin file of a directory with its status.",
        discussion: """
        Loads each *.so file of DIR into a host that declares the SDK's standard extension \
        points, and shows its id, version, what it provides, and its status (active, rejected, \
        failed, disabled) with the reason and a stable code. Exits 0 when the scan ran, even if \
        files were rejected; 1 with --strict if any file was rejected or failed, or if DIR \
        cannot be read; 2 on wrong usage.
        """,
        options: [
            PluginsOption.option,
            PluginsOption.config,
            PluginsOption.data,
            CommandSpec.json,
            .init(long: "--strict", help: "Exit 1 if any file was rejected or failed."),
        ])

    struct Output: Encodable {
        let directory: String
        let host: HostSummary
        let plugins: [PluginRecord]
    }

    static func run(_ arguments: ParsedArguments) throws(UsageError) -> Int32 {
        let directory = try PluginsOption.directory(arguments, command: spec.name)
        guard let (host, records) = PluginsOption.loadHost(PluginsOption.configuration(arguments, pluginsDirectory: directory))
        else { return ExitStatus.failure }
        defer { host.shutdown() }
        if arguments.flag("--json") {
            JSONOutput.print(Output(directory: PluginDirectory.absolutePath(directory), host: HostSummary(host), plugins: records))
        } else {
            Terminal.write(RecordText.list(records, directory: PluginDirectory.absolutePath(directory)) + "\n")
        }
        let problems = records.contains { $0.status == .rejected || $0.status == .failed }
        return arguments.flag("--strict") && problems ? ExitStatus.failure : ExitStatus.success
    }
}

/// The host side of every comparison, for JSON output.
struct HostSummary: Encodable {
    let sdkVersion: String
    let sdkABI: String
    let toolchain: String
    let interfaces: [[String: String]]

    init(_ host: PluginHost) {
        sdkVersion = host.sdkVersion
        sdkABI = host.sdkABI.description
        toolchain = host.toolchain
        interfaces = host.registry.declaredInterfaces.map { ["interface": $0.id, "version": $0.version.description] }
    }
}
