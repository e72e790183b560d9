import PlugboardCommandLine
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import Plugboard
import PlugboardHost

/// `plugboard deps --plugins DIR [--json | --dot]`
enum DepsCommand: CLICommand {
    static let spec = CommandSpec(
        name: "deps",
        abstract: "Show what each plugin requires, what it found, and the activation order.",
        discussion: """
        Examines the plugins of DIR as `list` does (no plugin code runs in this process) and prints, \
        for each plugin, the plugins it requires with their ranges, the version found and its status, \
        then the order activation would take. --dot writes a Graphviz graph instead (dot -Tsvg). \
        Exits 0 when every requirement is met, 1 when a plugin is kept out by a dependency problem \
        (dependency-missing, -version, -cycle, -rejected, -quarantined, -disabled, -range-invalid), \
        64 on wrong usage.
        """,
        options: [PluginsOption.option, CommandSpec.json, .init(long: "--dot", help: "Print the graph in Graphviz's dot language.")]
            + PluginsOption.host + [PluginsOption.rescan])

    struct Requirement: Encodable {
        let id: String
        let range: String
        let optional: Bool
        /// The installed version, if any.
        let found: String?
        /// Its status, if installed.
        let status: String?
    }

    struct Plugin: Encodable {
        let id: String
        let version: String?
        let status: String
        let code: String?
        let requires: [Requirement]
    }

    struct Report: Encodable {
        let plugins: [Plugin]
        /// Activation order of the available plugins.
        let order: [String]
    }

    static func run(_ arguments: ParsedArguments) throws(UsageError) -> Int32 {
        let directory = try PluginsOption.directory(arguments, command: spec.name)
        if arguments.flag("--json") && arguments.flag("--dot") {
            throw UsageError(message: "'--json' and '--dot' cannot be used together", command: spec.name)
        }
        guard let (host, records) = PluginsOption.loadHost(
            try PluginsOption.configuration(arguments, pluginsDirectory: directory, command: spec.name), start: .discover,
            rescan: arguments.flag(PluginsOption.rescan.long), printingDiagnostics: !arguments.flag("--json") && !arguments.flag("--dot"))
        else { return ExitStatus.failure }
        defer { host.shutdown() }
        let byID = Dictionary(records.compactMap { record in record.id.map { ($0, record) } }, uniquingKeysWith: { first, _ in first })
        let plugins = records.compactMap { record -> Plugin? in
            guard let id = record.id else { return nil }
            return Plugin(id: id, version: record.version?.description, status: record.status.rawValue, code: record.code,
                requires: record.requires.map { requirement in
                    let found = byID[requirement.id]
                    return Requirement(id: requirement.id, range: requirement.range, optional: requirement.optional,
                                       found: found?.version?.description, status: found?.status.rawValue)
                })
        }
        let report = Report(plugins: plugins, order: host.activationOrder())
        if arguments.flag("--json") {
            JSONOutput.print(report)
        } else if arguments.flag("--dot") {
            Terminal.write(dot(report))
        } else {
            Terminal.write(text(report))
        }
        let blocked = records.contains { $0.code?.hasPrefix("dependency-") == true }
        return blocked ? ExitStatus.failure : ExitStatus.success
    }

    static func text(_ report: Report) -> String {
        var out = ""
        for plugin in report.plugins {
            out += "\(Terminal.safe(plugin.id)) \(plugin.version ?? "-")  \(plugin.status)\(plugin.code.map { " [\($0)]" } ?? "")\n"
            for requirement in plugin.requires {
                let found = requirement.found.map { "found \($0), \(requirement.status ?? "?")" } ?? "not installed"
                out += "  requires \(Terminal.safe(requirement.id)) \(Terminal.safe(requirement.range))\(requirement.optional ? " (optional)" : ""): \(found)\n"
            }
        }
        out += "Activation order: \(report.order.isEmpty ? "(none available)" : report.order.map { Terminal.safe($0) }.joined(separator: ", "))\n"
        return out
    }

    /// Graphviz: one node per plugin (refused ones red), one edge per requirement (optional dashed).
    static func dot(_ report: Report) -> String {
        func quoted(_ text: String) -> String {
            // By scalar: a quote followed by a combining mark is one
            // Character, which a Character replacement would miss.
            var escaped = String.UnicodeScalarView()
            for scalar in text.unicodeScalars {
                if scalar == "\\" || scalar == "\"" { escaped.append("\\") }
                escaped.append(scalar)
            }
            return "\"" + String(escaped) + "\""
        }
        var out = "digraph plugins {\n  rankdir=LR;\n"
        for plugin in report.plugins {
            let color = plugin.status == "available" || plugin.status == "active" ? "black" : "red"
            out += "  \(quoted(plugin.id)) [label=\(quoted("\(plugin.id) \(plugin.version ?? "-")")), color=\(color)];\n"
            for requirement in plugin.requires {
                out += "  \(quoted(plugin.id)) -> \(quoted(requirement.id)) [label=\(quoted(requirement.range))\(requirement.optional ? ", style=dashed" : "")];\n"
            }
        }
        return out + "}\n"
    }
}
