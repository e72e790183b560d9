import PlugboardCommandLine
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import PlugboardHost

/// `plugboard doctor [--json]`: what this machine offers a sandboxed plugin,
/// and whether isolated plugins' program is where the tool looks for it.
enum DoctorCommand: CLICommand {
    static let spec = CommandSpec(
        name: "doctor",
        abstract: "Report which sandbox layers this machine's kernel offers a sandboxed plugin (docs/sandbox.md).",
        discussion: """
        Starts one child of this program with the strictest sandbox, loads nothing in it, and reports \
        the layers it reached (limits, capabilities, no-new-privileges, landlock, landlock-network, \
        landlock-scopes, seccomp), the kernel's Landlock ABI and each missing layer with why; and where \
        plugboard-child is, the program isolated and sandboxed plugins run in (beside this one). Exits 0 \
        when every layer a sandboxed plugin needs was reached (a required sandbox starts here) and \
        plugboard-child is there, 1 when a layer is missing (only --sandbox-best-effort starts it), the \
        child could not start or plugboard-child is missing, 64 on wrong usage.
        """,
        options: [CommandSpec.json],
        positionals: [])

    /// The report as `--json` prints it.
    struct Report: Encodable {
        let kernel: String
        let user: UInt32
        let level: String
        let layers: [String]
        let missing: [String]
        /// Layers not needed for the guarantees that were not reached (namespaces).
        let optionalMissing: [String]
        let landlockABI: Int?
        /// Whether granted TCP ports can be enforced (Landlock ABI 4).
        let tcpPortRules: Bool
        /// The program isolated plugins run in, when it is there.
        let childProgram: String?
        /// Why it is not, with the fix.
        let childProgramMissing: String?
    }

    static func run(_ arguments: ParsedArguments) throws(UsageError) -> Int32 {
        let status: SandboxStatus
        do {
            status = try SandboxProbe.run()
        } catch {
            Terminal.error(Terminal.safe(error.reason))
            return ExitStatus.failure
        }
        var name = utsname()
        uname(&name)
        let kernel = withUnsafeBytes(of: &name.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let child = ChildProgram.locate(configured: nil)
        let report = Report(
            kernel: kernel, user: getuid(), level: status.level, layers: status.layers, missing: status.missing,
            optionalMissing: status.optionalMissing,
            landlockABI: status.landlockABI, tcpPortRules: status.layers.contains("landlock-network"),
            childProgram: try? child.get(), childProgramMissing: { if case let .failure(missing) = child { missing.reason } else { nil } }())
        if arguments.flag("--json") {
            JSONOutput.print(report)
        } else {
            Terminal.write("""
                Sandbox on this machine (Linux \(Terminal.safe(kernel)), uid \(report.user))
                  level:    \(report.level == "sandboxed" ? "sandboxed: a required sandbox starts here" : "partial: only a best-effort sandbox starts here")
                  reached:  \(report.layers.joined(separator: ", "))
                  Landlock: \(report.landlockABI.map { "ABI \($0)" } ?? "none")\(report.tcpPortRules ? "" : " (granted TCP ports cannot be enforced: ABI 4 has port rules)")
                  missing:  \(report.missing.isEmpty ? "none" : report.missing.map { Terminal.safe($0) }.joined(separator: "; "))
                  optional: \(report.optionalMissing.isEmpty ? "every layer reached" : report.optionalMissing.map { Terminal.safe($0) }.joined(separator: "; "))
                Isolated plugins' program
                  child:    \(report.childProgram.map { Terminal.safe($0) } ?? "missing: " + Terminal.safe(report.childProgramMissing ?? ""))

                """)
        }
        return report.level == "sandboxed" && report.childProgram != nil ? ExitStatus.success : ExitStatus.failure
    }
}
