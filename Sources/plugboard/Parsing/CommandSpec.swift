/// What a command accepts; drives both parsing and `--help`.
struct CommandSpec: Sendable {
    struct Option: Sendable {
        let long: String
        var short: String? = nil
        /// nil for a flag.
        var valueName: String? = nil
        let help: String
        var isFlag: Bool { valueName == nil }
    }

    struct Positional: Sendable {
        let name: String
        let help: String
        var optional = false
        /// Takes every remaining argument (give them after `--`).
        var variadic = false
    }

    let name: String
    let abstract: String
    var discussion: String = ""
    var options: [Option] = []
    var positionals: [Positional] = []

    static let help = Option(long: "--help", short: "-h", help: "Show help for this command.")
    static let json = Option(long: "--json", help: "Print JSON for scripts instead of text.")
}
