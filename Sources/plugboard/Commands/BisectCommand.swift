import PlugboardCommandLine
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import PlugboardDev
import PlugboardHost

/// `plugboard bisect --plugins DIR -- COMMAND [ARGS...]`
enum BisectCommand: CLICommand {
    static let spec = CommandSpec(
        name: "bisect",
        abstract: "Find which plugins break a host, by halving the enabled ones.",
        discussion: """
        Runs COMMAND (a script, or `plugboard run ...`) again and again with some plugins of DIR \
        disabled, until it names the smallest set of plugins that makes it fail: a check that exits 0 \
        when the host works and non-zero when it does not. It first checks that COMMAND fails with \
        every plugin enabled and passes with none, then halves the enabled plugins; plugins that \
        break only together are found too. A plugin enabled brings the plugins it requires. The \
        installed files are never touched: each run gets the disabled ids in the environment \
        variable \(PluginHost.Configuration.disableVariable) (comma-separated), which every host \
        started by this tool honours, and an embedding host honours with \
        `configuration.disableFromEnvironment()`. Each step is printed as it finishes. Exits 0 when \
        it names the plugins, 1 when COMMAND passes with every plugin or fails with none (or cannot \
        be started), 64 on wrong usage.
        """,
        options: [PluginsOption.option, CommandSpec.json] + PluginsOption.host + [PluginsOption.rescan],
        positionals: [.init(name: "command", help: "The check to run, after `--`: exit 0 when the host works.", variadic: true)])

    struct Report: Encodable {
        let candidates: [String]
        let steps: [Bisection.Step]
        /// `found`, `passes-with-all` or `fails-with-none`.
        let result: String
        let culprits: [String]
    }

    static func run(_ arguments: ParsedArguments) throws(UsageError) -> Int32 {
        let directory = try PluginsOption.directory(arguments, command: spec.name)
        let command = arguments.positionals
        guard let executable = command.first else {
            throw UsageError(message: "missing the command to run, after '--' (for example: -- plugboard run --plugins DIR hello)", command: spec.name)
        }
        let json = arguments.flag("--json")
        let resolved = resolve(executable)
        guard FileManager.default.isExecutableFile(atPath: resolved) else {
            Terminal.error("cannot run '\(Terminal.safe(executable))': not an executable file, nor a command on PATH")
            return ExitStatus.failure
        }
        guard let (host, records) = PluginsOption.loadHost(
            try PluginsOption.configuration(arguments, pluginsDirectory: directory, command: spec.name), start: .discover,
            rescan: arguments.flag(PluginsOption.rescan.long), printingDiagnostics: !json)
        else { return ExitStatus.failure }
        host.shutdown()
        // The plugins that could run, with the plugins each requires among them.
        let usable = records.filter { $0.status == .available || $0.status == .active }
        let candidates = usable.compactMap(\.id)
        let requires = Dictionary(usable.compactMap { record in record.id.map { ($0, record.requires.filter { !$0.optional }.map(\.id)) } },
                                  uniquingKeysWith: { first, _ in first })
        func closure(_ ids: Set<String>) -> Set<String> {
            var all = ids
            var queue = Array(ids)
            while let id = queue.popLast() {
                for required in requires[id] ?? [] where all.insert(required).inserted { queue.append(required) }
            }
            return all
        }
        var steps: [Bisection.Step] = []
        var startFailure: ChildProcess.SpawnError?
        var verdicts: [[String]: Bool] = [:]
        if !json {
            Terminal.write(Terminal.style("Bisecting \(candidates.count) plugin\(candidates.count == 1 ? "" : "s") of \(Terminal.safe(directory))", .bold)
                + " with: \(Terminal.safe(command.joined(separator: " ")))\n")
        }
        let bisection = Bisection(
            candidates: candidates,
            fails: { enabled in
                let all = closure(enabled).sorted()
                if startFailure != nil { return (all, true, true) }
                if let known = verdicts[all] { return (all, known, true) }
                let disabled = candidates.filter { !all.contains($0) }
                let status: Int32
                switch runCheck(resolved, Array(command.dropFirst()), disabled: disabled) {
                case let .success(code): status = code
                case let .failure(error):
                    // No verdict: the steps after this one would only repeat it.
                    if startFailure == nil { startFailure = error }
                    status = 1
                }
                verdicts[all] = status != 0
                return (all, status != 0, false)
            },
            report: { step in
                steps.append(step)
                guard !json, startFailure == nil else { return }
                let verdict = step.failed ? Terminal.style("fails", .red) : Terminal.style("passes", .green)
                let shown = step.enabled.isEmpty ? "none" : step.enabled.count <= 6 ? step.enabled.joined(separator: ", ")
                    : step.enabled.prefix(6).joined(separator: ", ") + ", … (\(step.enabled.count))"
                Terminal.write("  step \(step.number): \(step.enabled.count) of \(candidates.count) enabled (\(Terminal.safe(shown))) → \(verdict)"
                    + (step.reused ? " (as in an earlier step)" : "") + "\n")
            })
        let outcome = bisection.run()
        if let startFailure {
            // It was found and is executable (checked above): what is left is
            // what it is, or how this process waits.
            let fix = startFailure.action == "start"
                ? "check that it is a program this machine can run (a script needs a #! line)" : "start plugboard with SIGCHLD at its default"
            Terminal.error("cannot \(startFailure.action) '\(Terminal.safe(executable))' (\(String(cString: strerror(startFailure.code)))): \(fix)")
            return ExitStatus.failure
        }
        let (result, culprits, message): (String, [String], String) = switch outcome {
        case let .culprits(found):
            ("found", found, found.count == 1
                ? "culprit: \(found[0]) (the check fails with it enabled, passes without it)"
                : "culprits, together: \(found.joined(separator: ", ")) (the check fails only with all of them enabled)")
        case .passesWithAll:
            ("passes-with-all", [], "the check passes with every plugin enabled: nothing to bisect")
        case .failsWithNone:
            ("fails-with-none", [], "the check fails with every plugin disabled: the plugins are not the cause")
        }
        if json {
            JSONOutput.print(Report(candidates: candidates, steps: steps, result: result, culprits: culprits))
        } else {
            Terminal.write((culprits.isEmpty ? Terminal.style(message, .yellow) : Terminal.style(message, .bold)) + "\n")
        }
        return culprits.isEmpty ? ExitStatus.failure : ExitStatus.success
    }

    /// `name` as a path: itself when it has a slash, else the first match on PATH.
    static func resolve(_ name: String) -> String {
        guard !name.contains("/") else { return name }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for folder in path.split(separator: ":") where FileManager.default.isExecutableFile(atPath: "\(folder)/\(name)") {
            return "\(folder)/\(name)"
        }
        return name
    }

    /// The check's exit status with `disabled` in the environment, or why it
    /// could not be run. Its output is not shown: the steps are.
    static func runCheck(_ executable: String, _ arguments: [String], disabled: [String]) -> Result<Int32, ChildProcess.SpawnError> {
        let environment = ProcessInfo.processInfo.environment.merging(
            [PluginHost.Configuration.disableVariable: disabled.joined(separator: ",")]) { $1 }
        do {
            let ending = try ChildProcess.run(executable, arguments, environment: environment, output: .discarded, errors: .discarded)
            return .success(ending.signalled ? 128 + ending.status : ending.status)
        } catch {
            return .failure(error)
        }
    }
}
