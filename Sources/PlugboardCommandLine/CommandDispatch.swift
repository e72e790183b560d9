#if canImport(Glibc)
import Glibc
#endif

/// The `main` of a tool made of ``CLICommand``s: `--help`, `--version`,
/// the command by name (with a "did you mean"), usage errors with exit 64.
/// Shared by `plugboard` and `plugboard-fleet`, which `plugboard` runs for
/// the fleet commands, so both read and answer alike.
package struct CommandDispatch {
    package let commands: [any CLICommand.Type]
    package let overview: String
    package let version: String

    package init(commands: [any CLICommand.Type], overview: String, version: String) {
        self.commands = commands
        self.overview = overview
        self.version = version
    }

    package func usageFailure(_ error: UsageError) -> Never {
        Terminal.error(error.message)
        let spec = error.command.flatMap { name in commands.first { $0.spec.name == name }?.spec }
        Terminal.writeErr((spec.map(HelpText.usage) ?? "USAGE: plugboard <command> [options]") + "\n")
        let hint = error.command.map { "plugboard \($0) --help" } ?? "plugboard --help"
        Terminal.writeErr("Run '\(hint)' for more.\n")
        exit(ExitStatus.usage)
    }

    /// Runs `arguments` (the command name first) and exits with its status.
    /// `other`: names this tool hands to another (nil: unknown command).
    package func run(_ arguments: [String], otherNames: [String] = [], other: (String) -> Never? = { _ in nil }) -> Never {
        guard let name = arguments.first else {
            Terminal.writeErr(overview + "\n")
            exit(ExitStatus.usage)
        }
        if name == "--help" || name == "-h" || name == "help" {
            Terminal.write(overview + "\n")
            exit(ExitStatus.success)
        }
        if name == "--version" {
            Terminal.write(version + "\n")
            exit(ExitStatus.success)
        }
        guard let command = commands.first(where: { $0.spec.name == name }) else {
            _ = other(name)
            let closest = (commands.map { $0.spec.name } + otherNames).map { ($0, ParsedArguments.editDistance(name, $0)) }.min { $0.1 < $1.1 }
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
    }
}
