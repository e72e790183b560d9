/// What a command accepts; drives both parsing and `--help`.
package struct CommandSpec: Sendable {
    package struct Option: Sendable {
        package let long: String
        package var short: String? = nil
        /// nil for a flag.
        package var valueName: String? = nil
        package let help: String
        package var isFlag: Bool { valueName == nil }

        package init(long: String, short: String? = nil, valueName: String? = nil, help: String) {
            self.long = long
            self.short = short
            self.valueName = valueName
            self.help = help
        }
    }

    package struct Positional: Sendable {
        package let name: String
        package let help: String
        package var optional = false
        /// Takes every remaining argument (give them after `--`).
        package var variadic = false

        package init(name: String, help: String, optional: Bool = false, variadic: Bool = false) {
            self.name = name
            self.help = help
            self.optional = optional
            self.variadic = variadic
        }
    }

    package let name: String
    package let abstract: String
    package var discussion: String = ""
    package var options: [Option] = []
    package var positionals: [Positional] = []

    package init(name: String, abstract: String, discussion: String = "", options: [Option] = [], positionals: [Positional] = []) {
        self.name = name
        self.abstract = abstract
        self.discussion = discussion
        self.options = options
        self.positionals = positionals
    }

    package static let help = Option(long: "--help", short: "-h", help: "Show help for this command.")
    package static let json = Option(long: "--json", help: "Print JSON for scripts instead of text.")
}
