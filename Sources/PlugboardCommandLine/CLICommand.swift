/// One `plugboard` subcommand.
package protocol CLICommand {
    static var spec: CommandSpec { get }
    /// Runs with parsed arguments; returns the exit status.
    static func run(_ arguments: ParsedArguments) throws(UsageError) -> Int32
}

/// Exit statuses (documented in `plugboard --help` and docs/cli.md, "CLI").
package enum ExitStatus {
    package static let success: Int32 = 0
    /// The work ran and found a problem (`--strict` rejections, inspect of a
    /// file that would not load), or could not run (unreadable directory).
    package static let failure: Int32 = 1
    /// Wrong command-line input (EX_USAGE, as swift-argument-parser exits).
    package static let usage: Int32 = 64
}
