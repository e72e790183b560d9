import PlugboardCommandLine
import PlugboardHost
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// One line of `plugboard dev --json`: `event` is one of `ready`,
/// `build-started`, `build-failed`, `rejected`, `rolled-back`, `reloaded`,
/// `plan` (before a reload that stops and restarts the plugins that require
/// this one), `planned` (--dry-run: what a reload would do) and `status`
/// (on SIGUSR1: a snapshot of every plugin) and `refreshed` (on SIGHUP:
/// what `PluginHost.refresh()` found in --plugins).
struct DevEvent: Encodable {
    var event: String
    var id: String?
    var generation: Int?
    /// Milliseconds per phase: detect, build, verify, load, switch.
    var ms: [String: Double]?
    var code: String?
    var reason: String?
    /// Output of the command run on the live generation after this event.
    var output: String?
    var diagnostics: [String]?
    /// What happened to the plugin's state on reload.
    var state: String?
    /// Address space the new generation's image added.
    var memoryBytes: Int?
    var changed: [String]?
    /// A reload's plan, or what became of each plugin that requires this one.
    var steps: [String]?
    /// `status` (on SIGUSR1): every plugin of the session's host.
    var plugins: [PluginSnapshot]?
    /// `status`: why the session's host ran code nothing vouches for.
    var taint: [TaintEntry]?

    init(_ event: String, id: String? = nil, generation: Int? = nil) {
        self.event = event
        self.id = id
        self.generation = generation
    }

    /// The one human line (plus indented details) for this event.
    var humanText: String {
        var parts = [Terminal.style(event, style, stderr: true)]
        if let id { parts.append(Terminal.safe(id, limit: TerminalText.nameLimit)) }
        if let generation { parts.append("gen \(generation)") }
        var line = parts.joined(separator: " ")
        if let ms, !ms.isEmpty {
            let order = ["detect", "build", "verify", "load", "switch"]
            line += "  " + order.compactMap { key in ms[key].map { "\(key) \(Self.format($0))" } }.joined(separator: " · ")
        }
        var notes: [String] = []
        if let memoryBytes, memoryBytes > 0 { notes.append("+\(memoryBytes / 1024) KiB mapped") }
        if let state { notes.append(Terminal.safe(state)) }
        if !notes.isEmpty { line += "  (" + notes.joined(separator: "; ") + ")" }
        if let changed, !changed.isEmpty { line += "  " + Terminal.safe(changed.joined(separator: ", ")) }
        if let code { line += "\n  [\(Terminal.safe(code))] \(Terminal.safe(reason ?? ""))" }
        for step in steps ?? [] { line += "\n  · " + Terminal.safe(step) }
        for plugin in plugins ?? [] {
            var facts = [plugin.status]
            if let generation = plugin.generation { facts.append("gen \(generation)") }
            if let mode = plugin.isolation?.mode { facts.append(mode) }
            if let calls = plugin.calls { facts.append("\(calls) calls, \(plugin.failures ?? 0) failed") }
            if let code = plugin.code { facts.append(code) }
            line += "\n  · \(Terminal.safe(plugin.id ?? plugin.file)): " + facts.joined(separator: ", ")
        }
        for diagnostic in diagnostics ?? [] { line += "\n  " + Terminal.safe(diagnostic) }
        if let output { line += "\n  → " + Terminal.safe(output) }
        return line
    }

    private var style: Terminal.Style {
        switch event {
        case "ready", "reloaded": .green
        case "build-started", "plan", "planned", "status", "refreshed": .cyan
        case "rolled-back": .yellow
        default: .red
        }
    }

    private static func format(_ ms: Double) -> String {
        ms >= 100 ? "\(Int(ms.rounded()))ms" : "\((ms * 10).rounded() / 10)ms"
    }
}
