import PlugboardCommandLine
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import Plugboard
import PlugboardDemo
import PlugboardHost

/// `plugboard demo`: the demo shell app. Loads the example plugins and shows,
/// step by step, every host service and feature pattern at work.
enum DemoCommand: CLICommand {
    static let spec = CommandSpec(
        name: "demo",
        abstract: "Run the demo shell app: a checkout screen composed from plugins.",
        discussion: """
        Loads the plugins of DIR with the host configuration FILE and shows: a screen composed \
        from plugin sections (one bad section and one unknown type are dropped, the rest renders), \
        navigation through the router, an event from the coupons plugin changing what the checkout \
        shows, a validation that fails and one that passes, and storage that persists between runs \
        (under --data). `make run` runs it on the example plugins. Exits 0 when the demo ran, 1 if \
        the plugins directory cannot be read, 64 on wrong usage.
        """,
        options: [
            PluginsOption.option,
            PluginsOption.config,
            PluginsOption.data,
            PluginsOption.cache,
            PluginsOption.locked,
            PluginsOption.allowUnsafe,
            .init(long: "--screen", valueName: "file", help: "Screen document to compose (JSON with a sections array)."),
            CommandSpec.json,
        ])

    static func run(_ arguments: ParsedArguments) throws(UsageError) -> Int32 {
        let directory = try PluginsOption.directory(arguments, command: spec.name)
        var screen: Data?
        if let path = arguments.value("--screen") {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw UsageError(message: "cannot read screen document '\(path)'", command: spec.name)
            }
            screen = data
        }
        let json = arguments.flag("--json")
        var configuration = try PluginsOption.configuration(arguments, pluginsDirectory: directory, command: spec.name)
        configuration.observability.logSink = LogSink { record in
            // In JSON mode stdout is for the document only.
            Terminal.writeErr(Terminal.style("  log \(record.level) [\(Terminal.safe(record.label))] ", .dim, stderr: true) + Terminal.safe(record.message) + "\n")
        }
        guard let (host, records) = PluginsOption.loadHost(configuration, start: .everything, printingDiagnostics: false) else { return ExitStatus.failure }
        defer { host.shutdown() }
        let report = DemoScript(host: host, screen: screen, screenSource: arguments.value("--screen") ?? "").run(records: records)
        if json {
            JSONOutput.print(report)
        } else {
            Terminal.write(DemoText.render(report))
        }
        return ExitStatus.success
    }
}
