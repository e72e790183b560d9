/// The result of parsing one command's arguments against its ``CommandSpec``.
package struct ParsedArguments: Sendable {
    package var values: [String: String] = [:]
    package var flags: Set<String> = []
    package var positionals: [String] = []
    package var helpRequested = false

    package func value(_ long: String) -> String? { values[long] }
    package func flag(_ long: String) -> Bool { flags.contains(long) }

    /// Parses `arguments` (after the command name). `--opt value`,
    /// `--opt=value`, short forms, and `--` to end options are understood.
    package static func parse(_ arguments: [String], for spec: CommandSpec) throws(UsageError) -> ParsedArguments {
        var result = ParsedArguments()
        let options = spec.options + [CommandSpec.help]
        var index = 0
        var optionsEnded = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if optionsEnded || !argument.hasPrefix("-") || argument == "-" {
                result.positionals.append(argument)
                continue
            }
            if argument == "--" { optionsEnded = true; continue }
            let (name, inline) = split(argument)
            guard let option = options.first(where: { $0.long == name || $0.short == name }) else {
                throw UsageError(message: "unknown option '\(name)'\(suggestion(for: name, among: options))", command: spec.name)
            }
            if option.long == CommandSpec.help.long { result.helpRequested = true; continue }
            if option.isFlag {
                if inline != nil { throw UsageError(message: "'\(option.long)' takes no value", command: spec.name) }
                result.flags.insert(option.long)
                continue
            }
            if let inline {
                guard !inline.isEmpty else {
                    throw UsageError(message: "empty value for '\(option.long) <\(option.valueName!)>'", command: spec.name)
                }
                result.values[option.long] = inline
            } else if index < arguments.count, !arguments[index].hasPrefix("-") || arguments[index] == "-" {
                // A value that starts with '-' must be given as --option=value.
                result.values[option.long] = arguments[index]
                index += 1
            } else {
                throw UsageError(message: "missing value for '\(option.long) <\(option.valueName!)>'", command: spec.name)
            }
        }
        if result.helpRequested { return result }
        let required = spec.positionals.filter { !$0.optional }
        if result.positionals.count < required.count {
            let missing = required[result.positionals.count]
            throw UsageError(message: "missing <\(missing.name)>", command: spec.name)
        }
        if result.positionals.count > spec.positionals.count && spec.positionals.last?.variadic != true {
            throw UsageError(message: "unexpected argument '\(result.positionals[spec.positionals.count])'", command: spec.name)
        }
        return result
    }

    private static func split(_ argument: String) -> (String, String?) {
        guard argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") else { return (argument, nil) }
        return (String(argument[..<equals]), String(argument[argument.index(after: equals)...]))
    }

    /// " (did you mean '--x'?)" when a known option is close (edit distance < 4).
    package static func suggestion(for name: String, among options: [CommandSpec.Option]) -> String {
        let best = options.map { ($0.long, editDistance(name, $0.long)) }.min { $0.1 < $1.1 }
        guard let best, best.1 < 4 else { return "" }
        return "; did you mean '\(best.0)'?"
    }

    package static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        if a.isEmpty { return b.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...max(1, b.count) where j <= b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}
