import PlugboardCommandLine
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import PlugboardHost
import PlugboardLoading

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
        child could not start or plugboard-child is missing, 64 on wrong usage. Also says which \
        resource bounds (memory, tasks, cpu) this machine's cgroups can hold for isolated plugins' \
        children, and why each other cannot (docs/sandbox.md, "Resources"); a missing bound does not \
        change the exit status (bounds are best effort unless a host requires them).
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
        /// The cgroup version children's bounds use (nil: none here).
        let cgroupVersion: Int?
        /// The bounds this machine holds for this user, and why each other cannot.
        let bounds: [String]
        let boundsMissing: [String]
        /// What holds a child where a cgroup cannot.
        let boundsInstead: [String]
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
        let cgroups = ChildCgroups.process
        let report = Report(
            kernel: kernel, user: getuid(), level: status.level, layers: status.layers, missing: status.missing,
            optionalMissing: status.optionalMissing,
            landlockABI: status.landlockABI, tcpPortRules: status.layers.contains("landlock-network"),
            childProgram: try? child.get(), childProgramMissing: { if case let .failure(missing) = child { missing.reason } else { nil } }(),
            cgroupVersion: cgroups.version, bounds: ChildCgroups.Bound.all.filter(cgroups.reachable.contains).map(\.description),
            boundsMissing: ChildCgroups.Bound.all.compactMap { bound in cgroups.missing[bound].map { "\(bound): \($0)" } },
            boundsInstead: [
                cgroups.missing[.tasks].map { _ in "tasks: the host's sampler ends a child holding more than its bound (read every 100 ms)" },
                ChildBounds.processLimit().map { "threads of this user: each child's RLIMIT_NPROC is \($0), the user's limit less \(ChildBounds.reserve) kept for the host" },
            ].compactMap { $0 })
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
                Resource bounds of their children (cgroup \(report.cgroupVersion.map { "v\($0)" } ?? "none"))
                  held:     \(report.bounds.isEmpty ? "none" : report.bounds.joined(separator: ", "))
                  missing:  \(report.boundsMissing.isEmpty ? "none" : report.boundsMissing.map { Terminal.safe($0) }.joined(separator: "; "))
                  instead:  \(report.boundsInstead.isEmpty ? "nothing needed" : report.boundsInstead.joined(separator: "; "))

                """)
        }
        return report.level == "sandboxed" && report.childProgram != nil ? ExitStatus.success : ExitStatus.failure
    }
}
