import Plugboard
import PlugboardHost

/// `plugboard inspect FILE [--json]`
enum InspectCommand: CLICommand {
    static let spec = CommandSpec(
        name: "inspect",
        abstract: "Show everything known about one plugin file, including exactly why it was rejected.",
        discussion: """
        Runs the same checks and loading as `list` on one file: what the file says before it is \
        loaded (architecture, toolchain, SDK ABI, linked libraries), what its descriptor says, and \
        the outcome. Exits 0 if the plugin loads and activates, 1 if not, 2 on wrong usage.
        """,
        options: [
            CommandSpec.json,
            PluginsOption.config,
            PluginsOption.data,
        ],
        positionals: [.init(name: "file", help: "The plugin .so file.")])

    static func run(_ arguments: ParsedArguments) throws(UsageError) -> Int32 {
        let host = PluginHost(configuration: PluginsOption.configuration(arguments, pluginsDirectory: nil))
        host.declareStandardExtensionPoints()
        let record = host.load(files: [arguments.positionals[0]])[0]
        if !arguments.flag("--json") { PluginsOption.reportDiagnostics(host) }
        defer { host.shutdown() }
        if arguments.flag("--json") {
            JSONOutput.print(record)
        } else {
            Terminal.write(RecordText.detail(record, host: host) + "\n")
        }
        return record.status == .active ? ExitStatus.success : ExitStatus.failure
    }
}
