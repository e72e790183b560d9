import PlugboardCommandLine
#if canImport(Glibc)
import Glibc
#endif

/// `plugboard-fleet`: the fleet commands, which `plugboard` runs (see
/// FleetCommands): plugin sets through OCI registries.
let commands: [any CLICommand.Type] = [PublishCommand.self, PullCommand.self, FollowCommand.self, RollbackCommand.self, ExportCommand.self, ImportCommand.self]

let overview = """
OVERVIEW: Plugin sets through OCI registries (run as `plugboard <command>`).

USAGE: plugboard <command> [options]

COMMANDS:
\(commands.map { HelpText.row($0.spec.name, $0.spec.abstract) }.joined(separator: "\n"))

EXIT STATUS: 0 success; 1 the command ran and found a problem (the error's code says which); 64 wrong usage.
"""

CommandDispatch(commands: commands, overview: overview, version: "plugboard-fleet").run(Array(CommandLine.arguments.dropFirst()))
