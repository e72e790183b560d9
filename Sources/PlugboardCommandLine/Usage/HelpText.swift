/// Renders `--help` in the swift-argument-parser layout.
package enum HelpText {
    package static func render(_ spec: CommandSpec) -> String {
        var lines = ["OVERVIEW: \(spec.abstract)", ""]
        if !spec.discussion.isEmpty { lines += [spec.discussion, ""] }
        lines += [usage(spec), ""]
        if !spec.positionals.isEmpty {
            lines.append("ARGUMENTS:")
            for positional in spec.positionals { lines.append(row("<\(positional.name)>", positional.help)) }
            lines.append("")
        }
        lines.append("OPTIONS:")
        for option in spec.options + [CommandSpec.help] {
            var label = option.short.map { "\($0), \(option.long)" } ?? option.long
            if let value = option.valueName { label += " <\(value)>" }
            lines.append(row(label, option.help))
        }
        return lines.joined(separator: "\n")
    }

    /// `USAGE: plugboard <command> <arguments> [options]`, as `--help` and usage errors show it.
    package static func usage(_ spec: CommandSpec) -> String {
        let optionPart = spec.options.isEmpty ? "" : " [options]"
        let positionalPart = spec.positionals.map {
            $0.variadic ? " [-- <\($0.name)> ...]" : $0.optional ? " [<\($0.name)>]" : " <\($0.name)>"
        }.joined()
        return "USAGE: plugboard \(spec.name)\(positionalPart)\(optionPart)"
    }

    package static func row(_ label: String, _ help: String) -> String {
        let padded = label.count < 24 ? label + String(repeating: " ", count: 24 - label.count) : label + "\n" + String(repeating: " ", count: 26)
        return "  \(padded)\(help)"
    }
}
