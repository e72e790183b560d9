import PlugboardCommandLine
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import Plugboard
import PlugboardDemo
import PlugboardHost

/// `plugboard inspect FILE [--json]`
enum InspectCommand: CLICommand {
    static let spec = CommandSpec(
        name: "inspect",
        abstract: "Show everything known about one plugin file, including exactly why it was rejected.",
        discussion: """
        Runs the same checks and scan as `list` on one file: what the file says before it is \
        loaded (architecture, toolchain, SDK ABI, linked libraries), what its descriptor says \
        (read in a scanner process), and the outcome. No plugin code runs in this process unless \
        --activate is given (the dev loop's verifier uses it, in a child process). Exits 0 if the \
        plugin is available (with --activate: active), 1 if not, 64 on wrong usage.
        """,
        options: [
            CommandSpec.json
        ] + PluginsOption.host + [
            PluginsOption.rescan,
            .init(long: "--activate", help: "Also load, create and activate the plugin in this process."),
        ],
        positionals: [.init(name: "file", help: "The plugin .so file.")])

    static func run(_ arguments: ParsedArguments) throws(UsageError) -> Int32 {
        var configuration = try PluginsOption.configuration(arguments, pluginsDirectory: nil, command: spec.name)
        // --locked: the lock file of the folder the file is in, as `list --plugins` that folder would use.
        if arguments.flag(PluginsOption.locked.long) {
            configuration.trust.lockFile = LockFile.defaultPath(for: URL(fileURLWithPath: PluginDirectory.absolutePath(arguments.positionals[0])).deletingLastPathComponent().path)
        }
        let host = PluginHost(configuration: configuration)
        host.declareDemoExtensionPoints()
        let file = [arguments.positionals[0]]
        let activate = arguments.flag("--activate")
        let rescan = arguments.flag(PluginsOption.rescan.long)
        var record = host.discover(files: file, rescan: rescan)[0]
        if activate, let id = record.id, record.status == .available {
            host.activate(pluginIDs: [id])
            record = host.records.last { $0.path == record.path } ?? record
        }
        if !arguments.flag("--json") { PluginsOption.reportDiagnostics(host) }
        defer { host.shutdown() }
        if arguments.flag("--json") {
            JSONOutput.print(record)
        } else {
            Terminal.write(RecordText.detail(record, host: host) + "\n")
        }
        return record.status == (activate ? .active : .available) ? ExitStatus.success : ExitStatus.failure
    }
}
