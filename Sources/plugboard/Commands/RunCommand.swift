import PlugboardCommandLine
import Plugboard
import PlugboardHost

/// `plugboard run COMMAND --plugins DIR [-- ARGS...]`
enum RunCommand: CLICommand {
    static let spec = CommandSpec(
        name: "run",
        abstract: "Run a command a plugin provides (the plugboard.command extension point).",
        discussion: """
        Examines the plugins of DIR, activates those that provide commands (plugboard.command) \
        and may provide this one (a plugin that declares command triggers is activated only for \
        the names it declares), finds the command by name and prints its output. Plugins that were rejected, quarantined \
        or failed are reported on stderr, once each. When several plugins provide the command, the \
        first by plugin id runs and a warning names the others. The command runs with a crash-journal note: if it \
        crashes the process, the next start quarantines its plugin. Exits 0 if the command ran, 1 \
        if it threw or no plugin provides it, 64 on wrong usage.
        """,
        options: [
            PluginsOption.option
        ] + PluginsOption.host,
        positionals: [
            .init(name: "command", help: "Name of the command, e.g. greet."),
            .init(name: "arguments", help: "Arguments passed to the command.", optional: true, variadic: true),
        ])

    static func run(_ arguments: ParsedArguments) throws(UsageError) -> Int32 {
        let directory = try PluginsOption.directory(arguments, command: spec.name)
        guard let (host, _) = PluginsOption.loadHost(
            try PluginsOption.configuration(arguments, pluginsDirectory: directory, command: spec.name), start: .lazily)
        else { return ExitStatus.failure }
        defer { host.shutdown() }
        let name = arguments.positionals[0]
        // Activates the plugins that may provide `name`: those declaring
        // command:NAME, and those declaring no command at all.
        let registrations = host.commandProviders(named: name)
        // Said once: a quarantine the host just reported (a crash of the
        // previous start) is among its diagnostics already.
        let diagnostics = host.diagnostics
        for record in host.records where [.rejected, .failed, .quarantined].contains(record.status) {
            if diagnostics.contains(where: { $0.code.rawValue == record.code && $0.message.hasPrefix(record.path + ":") }) { continue }
            Terminal.writeErr(Terminal.style("warning:", .yellow, stderr: true) + " \(Terminal.safe(record.error?.message ?? record.path)) [\(record.code ?? "")]\n")
        }
        let commands = registrations.compactMap { registration in
            (registration.provider as? any Command).map { (registration.pluginID, $0) }
        }
        // A plugin that declares its commands but provides one it did not
        // declare is skipped for that name while it is not active: say so.
        for undeclared in host.undeclaredCommands(among: registrations) {
            Terminal.writeErr(Terminal.style("warning:", .yellow, stderr: true)
                + " plugin \(Terminal.safe(undeclared.pluginID)) provides command '\(Terminal.safe(undeclared.name, limit: TerminalText.nameLimit))' "
                + "without declaring it (it declares \(undeclared.declared.map { Terminal.safe($0, limit: TerminalText.nameLimit) }.joined(separator: ", "))): "
                + "`plugboard run \(Terminal.safe(undeclared.name, limit: TerminalText.nameLimit))` does not activate it; "
                + "add .command(\"\(Terminal.safe(undeclared.name, limit: TerminalText.nameLimit))\") to its activation list [undeclared-command]\n")
        }
        // One name, several plugins: the first by plugin id runs, and the
        // user hears of the others (no silent winner).
        let providing = commands.filter { $0.1.name == name }.sorted { $0.0 < $1.0 }
        if providing.count > 1 {
            Terminal.writeErr(Terminal.style("warning:", .yellow, stderr: true)
                + " command '\(Terminal.safe(name, limit: TerminalText.nameLimit))' is provided by plugins \(providing.map(\.0).joined(separator: ", ")); \(providing[0].0) runs "
                + "(the first by plugin id). Disable the others to choose (\"enabled\": false for them in the host configuration) "
                + "[duplicate-command]\n")
        }
        guard let (pluginID, command) = providing.first else {
            // Names of active commands, and those that available plugins not activated declare.
            let declared = host.records
                .filter { $0.status == .available && $0.provides.contains { $0.id == Commands.interface.id } }
                .flatMap(\.declaredCommands)
            let known = Set(commands.map(\.1.name) + declared).map { Terminal.safe($0, limit: TerminalText.nameLimit) }.sorted()
            Terminal.error("no plugin provides command '\(Terminal.safe(name, limit: TerminalText.nameLimit))'; available: \(known.isEmpty ? "none" : known.joined(separator: ", "))")
            return ExitStatus.failure
        }
        do {
            let output = try host.journaled(call: pluginID) {
                try command.run(arguments: Array(arguments.positionals.dropFirst()))
            }
            Terminal.write(output + "\n")
            return ExitStatus.success
        } catch {
            // The command's output is the plugin's to format; its error and
            // name are shown as text.
            Terminal.error("command '\(Terminal.safe(name, limit: TerminalText.nameLimit))' failed: \(Terminal.safe("\(error)"))")
            return ExitStatus.failure
        }
    }
}
