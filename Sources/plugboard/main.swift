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

OPTIONS:
\(HelpText.row("-h, --help", "Show help; `plugboard <command> --help` for a command."))
\(HelpText.row("--version", "Show the SDK version the tool was built with."))

EXIT STATUS: 0 success; 1 the command ran and found a problem (see each command); 64 wrong usage.
"""

@MainActor func usageFailure(_ error: UsageError) -> Never {
    Terminal.error(error.message)
    let spec = error.command.flatMap { name in commands.first { $0.spec.name == name }?.spec }
    Terminal.writeErr((spec.map(HelpText.usage) ?? "USAGE: plugboard <command> [options]") + "\n")
    let hint = error.command.map { "plugboard \($0) --help" } ?? "plugboard --help"
    Terminal.writeErr("Run '\(hint)' for more.\n")
    exit(ExitStatus.usage)
}

// A parent that ignores SIGCHLD passes that on through exec, and then no
// child of this tool could be waited for (the scanner's, a build's, a
// bisect's check): the tool's children are its own business.
signal(SIGCHLD, SIG_DFL)

let arguments = Array(CommandLine.arguments.dropFirst())
guard let name = arguments.first else {
    Terminal.writeErr(overview + "\n")
    exit(ExitStatus.usage)
}
if name == "--help" || name == "-h" || name == "help" {
    Terminal.write(overview + "\n")
    exit(ExitStatus.success)
}
if name == "--version" {
    Terminal.write("plugboard (SDK \(HostFacts.sdkLabel))\n")
    exit(ExitStatus.success)
}
guard let command = commands.first(where: { $0.spec.name == name }) else {
    let closest = commands.map { ($0.spec.name, ParsedArguments.editDistance(name, $0.spec.name)) }.min { $0.1 < $1.1 }
    let hint = closest.flatMap { $0.1 < 4 ? "; did you mean '\($0.0)'?" : nil } ?? ""
    usageFailure(UsageError(message: "unknown command '\(name)'\(hint)", command: nil))
}
do {
    let parsed = try ParsedArguments.parse(Array(arguments.dropFirst()), for: command.spec)
    if parsed.helpRequested {
        Terminal.write(HelpText.render(command.spec) + "\n")
        exit(ExitStatus.success)
    }
    exit(try command.run(parsed))
} catch {
    usageFailure(error)
}
