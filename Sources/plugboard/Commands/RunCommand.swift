import Plugboard
import PlugboardHost

/// `plugboard run COMMAND --plugins DIR [-- ARGS...]`
enum RunCommand: CLICommand {
    static let spec = CommandSpec(
        name: "run",
        abstract: "Run a command a plugin provides (the plugboard.command extension point).",
        discussion: """
        Loads the plugins of DIR, finds the command by name and prints its output. Plugins that \
        are not active are reported on stderr. Exits 0 if the command ran, 1 if it threw or no \
        plugin provides it, 2 on wrong usage.
        """,
        options: [
            PluginsOption.option,
            PluginsOption.config,
            PluginsOption.data,
        ],
        positionals: [
            .init(name: "command", help: "Name of the command, e.g. greet."),
            .init(name: "arguments", help: "Arguments passed to the command.", optional: true, variadic: true),
        ])

    static func run(_ arguments: ParsedArguments) throws(UsageError) -> Int32 {
        let directory = try PluginsOption.directory(arguments, command: spec.name)
        guard let (host, records) = PluginsOption.loadHost(PluginsOption.configuration(arguments, pluginsDirectory: directory))
        else { return ExitStatus.failure }
        defer { host.shutdown() }
        for record in records where record.status == .rejected || record.status == .failed {
            Terminal.writeErr(Terminal.style("warning:", .yellow, stderr: true) + " \(record.error?.message ?? record.path) [\(record.code ?? "")]\n")
        }
        let name = arguments.positionals[0]
        let commands = host.registry.providers(of: Commands.self)
        guard let command = commands.first(where: { $0.name == name }) else {
            let known = commands.map(\.name).sorted()
            Terminal.error("no plugin provides command '\(name)'; available: \(known.isEmpty ? "none" : known.joined(separator: ", "))")
            return ExitStatus.failure
        }
        do {
            Terminal.write(try command.run(arguments: Array(arguments.positionals.dropFirst())) + "\n")
            return ExitStatus.success
        } catch {
            Terminal.error("command '\(name)' failed: \(error)")
            return ExitStatus.failure
        }
    }
}
