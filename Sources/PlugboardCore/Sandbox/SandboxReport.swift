import CPlugboardHost

/// What a child's sandbox reached, as its constructor wrote it down
/// (`plugboard_sandbox_report`): the layers applied and those missing, each
/// with why.
package struct SandboxReport: Sendable, Equatable, Codable {
    package var reached: [String] = []
    var missing: [Missing] = []
    var landlockABI: Int?

    package struct Missing: Sendable, Equatable, Codable {
        package var layer: String
        package var reason: String
    }

    /// This process's report; nil when no sandbox was asked for.
    package static var current: SandboxReport? {
        plugboard_sandbox_report().map { SandboxReport(text: String(cString: $0)) }
    }

    package init(reached: [String] = [], missing: [Missing] = [], landlockABI: Int? = nil) {
        self.reached = reached
        self.missing = missing
        self.landlockABI = landlockABI
    }

    package init(text: String) {
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 2).map(String.init)
            switch parts.first {
            case "reached" where parts.count >= 2: reached.append(parts[1])
            case "missing" where parts.count >= 2: missing.append(Missing(layer: parts[1], reason: parts.count > 2 ? parts[2] : ""))
            case "landlock-abi" where parts.count >= 2: landlockABI = Int(parts[1])
            default: break
            }
        }
    }

    /// The layers in `needed` that were not reached, with why.
    package func unmet(_ needed: [String]) -> [Missing] {
        needed.filter { !reached.contains($0) }.map { layer in
            missing.first { $0.layer == layer } ?? missing.first { ["threads", "sanitizer", "policy", "no-new-privileges"].contains($0.layer) }
                .map { Missing(layer: layer, reason: "not applied: \($0.reason)") }
                ?? Missing(layer: layer, reason: "not applied (the child's program did not apply a sandbox: is it built with this PlugboardHost?)")
        }
    }
}

/// What `list`, `inspect`, `--json` and the status snapshot show of a
/// sandboxed plugin's child.
public struct SandboxStatus: Sendable, Equatable, Codable {
    /// `sandboxed` (every guarantee held) or `partial` (started best effort
    /// with a layer missing).
    public let level: String
    /// The layers applied, as the child reported them.
    public let layers: [String]
    /// The layers the guarantees need that are missing, with why.
    public let missing: [String]
    /// The kernel's Landlock ABI version (nil: no Landlock).
    public let landlockABI: Int?
    /// Layers the guarantees do not need that were not reached either
    /// (namespaces), with why.
    public let optionalMissing: [String]

    package init(_ report: SandboxReport, needed: [String]) {
        let unmet = report.unmet(needed)
        level = unmet.isEmpty ? "sandboxed" : "partial"
        layers = report.reached
        missing = unmet.map { "\($0.layer): \($0.reason)" }
        landlockABI = report.landlockABI
        optionalMissing = report.missing.filter { !needed.contains($0.layer) }.map { "\($0.layer): \($0.reason)" }
    }
}
