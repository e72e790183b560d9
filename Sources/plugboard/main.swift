import PlugboardCommandLine
#if canImport(Glibc)
import Glibc
#endif

/// `plugboard`: load, inspect and develop Plugboard plugins.
let commands: [any CLICommand.Type] = [ListCommand.self, InspectCommand.self, RunCommand.self, DepsCommand.self, DemoCommand.self, DevCommand.self, NewCommand.self, LockCommand.self, KeygenCommand.self, InstallCommand.self, BisectCommand.self, DoctorCommand.self]

let overview = """
OVERVIEW: Load, inspect and develop Plugboard plugins (runtime-loaded Swift .so files).

USAGE: plugboard <command> [options]

COMMANDS:
\(commands.map { HelpText.row($0.spec.name, $0.spec.abstract) }.joined(separator: "\n"))

FLEET COMMANDS (OCI registries; run by \(FleetCommands.executableName)):
\(FleetCommands.summaries.map { HelpText.row($0.name, $0.abstract) }.joined(separator: "\n"))

OPTIONS:
\(HelpText.row("-h, --help", "Show help; `plugboard <command> --help` for a command."))
\(HelpText.row("--version", "Show the SDK version the tool was built with."))

EXIT STATUS: 0 success; 1 the command ran and found a problem (see each command); 64 wrong usage.
"""

// A parent that ignores SIGCHLD passes that on through exec, and then no
// child of this tool could be waited for (the scanner's, a build's, a
// bisect's check): the tool's children are its own business.
signal(SIGCHLD, SIG_DFL)

let arguments = Array(CommandLine.arguments.dropFirst())
CommandDispatch(commands: commands, overview: overview, version: "plugboard (SDK \(HostFacts.sdkLabel))").run(arguments, otherNames: FleetCommands.summaries.map(\.name)) { name in
    FleetCommands.summaries.contains { $0.name == name } ? FleetCommands.exec(arguments) : nil
}
