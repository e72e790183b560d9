import Dispatch
import FoundationEssentials
import PlugboardCommandLine
import PlugboardFleet
import PlugboardHost
#if canImport(Glibc)
import Glibc
#endif

/// `plugboard follow REF --plugins DIR`: pull each new set a tag points to.
enum FollowCommand: CLICommand {
    static let spec = CommandSpec(
        name: "follow",
        abstract: FleetCommands.summaries[2].abstract,
        discussion: """
        Asks the registry where the tag REF points (one HEAD request) every --interval seconds \
        (with up to 10% jitter; after a failure the wait doubles, up to 10 intervals). While the \
        digest is the one last installed, nothing happens. When it changes, the set is pulled by \
        that digest and checked as `plugboard pull` checks it (a set whose sequence is not higher \
        than the last accepted is refused: a registry cannot roll hosts back), then switched in; \
        the accepted sequence is recorded for the hosts. A refused digest is reported once and \
        skipped until the tag moves. Every decision is one line on stdout (JSON lines with --json). \
        State lives in the state directory (--cache). --once: one check, for cron and systemd \
        timers. Exits 0 (with --once: installed or unchanged), 1 when the check failed, 64 on wrong usage.
        """,
        options: [FleetOptions.plugins] + FleetOptions.trust + [
            .init(long: "--interval", valueName: "seconds", help: "Seconds between checks (default 60, at least 1)."),
            .init(long: "--once", help: "Check once and exit."),
            FleetOptions.platform, FleetOptions.plainHTTP, FleetOptions.stallWindow, CommandSpec.json,
        ],
        positionals: [.init(name: "ref", help: "HOST[:PORT]/REPOSITORY:TAG")])

    struct Decision: Encodable {
        let time: Date
        let reference: String
        /// unchanged, installed, refused, failed.
        let decision: String
        let digest: String?
        let sequence: UInt64?
        let code: String?
        let subject: String?
        let reason: String?
        let fix: String?
    }

    static func run(_ arguments: ParsedArguments) throws(UsageError) -> Int32 {
        let json = arguments.flag("--json")
        let reference = try FleetOptions.reference(arguments.positionals[0], arguments, command: spec.name)
        guard reference.digest == nil else { throw UsageError(message: "follow a tag; a digest never changes (use `plugboard pull`)", command: spec.name) }
        let directory = try FleetOptions.directory(arguments, command: spec.name)
        let platform = try FleetOptions.platform(arguments, command: spec.name) ?? .current
        var interval = 60.0
        if let text = arguments.value("--interval") {
            guard let value = Double(text), value >= 1 else { throw UsageError(message: "'--interval' takes seconds (1 or more), got '\(text)'", command: spec.name) }
            interval = value
        }
        guard let (signatures, stateDirectory) = try FleetOptions.signatures(arguments, command: spec.name) else { return ExitStatus.failure }
        let installer = SetInstaller(directory: directory, signatures: signatures)
        let stateFile = FollowState.file(for: directory, stateDirectory: stateDirectory)
        let client = RegistryClient(reference, stallWindow: try FleetOptions.stallWindow(arguments, command: spec.name))
        var failures = 0
        let nextCheck = DispatchSemaphore(value: 0)
        while true {
            let succeeded = check(reference, client: client, installer: installer, platform: platform, stateFile: stateFile, json: json)
            if arguments.flag("--once") { return succeeded ? ExitStatus.success : ExitStatus.failure }
            failures = succeeded ? 0 : min(failures + 1, 10)
            let wait = min(interval * Double(1 << failures), interval * 10) * Double.random(in: 1.0...1.1)
            // Asleep on a semaphore until the next check is due (a futex with
            // a deadline: no loop around signals, no polling).
            _ = nextCheck.wait(until: .now + .milliseconds(Int(wait * 1000)))
        }
    }

    /// One poll; whether it ended well (unchanged or installed).
    static func check(_ reference: Reference, client: RegistryClient, installer: SetInstaller, platform: Platform, stateFile: String, json: Bool) -> Bool {
        var state = FollowState.load(stateFile) ?? FollowState(reference: reference.description)
        if state.reference != reference.description { state = FollowState(reference: reference.description) }
        func say(_ decision: String, _ digest: String?, sequence: UInt64? = nil, error: FleetError? = nil) {
            let line = Decision(time: Date(), reference: reference.description, decision: decision, digest: digest, sequence: sequence,
                                code: error?.code.rawValue, subject: error?.subject, reason: error?.reason, fix: error?.fix)
            if json { JSONOutput.line(line); return }
            var text = "\(UTCTimestamp.string(from: line.time)) \(Terminal.safe(reference.description)): \(decision)"
            if let digest { text += " \(digest)" }
            if let sequence { text += " (sequence \(sequence))" }
            if let error { text += ": [\(error.code)] \(Terminal.safe(error.reason)); \(Terminal.safe(error.fix))" }
            Terminal.write(text + "\n")
        }
        let digest: String
        do { digest = try client.digest(of: reference.manifestName) } catch {
            say("failed", nil, error: error)
            return false
        }
        state.checked = Date()
        if digest == state.digest {
            say("unchanged", digest)
            state.save(stateFile)
            return true
        }
        if digest == state.refusedDigest {
            say("still-refused", digest, error: FleetError(.init(state.refusedCode ?? "refused"), reference.description, reason: "refused before", fix: "publish a newer signed set to the tag"))
            return false
        }
        do {
            let report = try SetInstall.run(digest, from: client, subject: reference.at(digest).description, platform: platform, installer: installer, json: json)
            say(report.outcome, digest, sequence: report.sequence)
            state.digest = digest
            state.refusedDigest = nil
            state.refusedCode = nil
            state.save(stateFile)
            return true
        } catch {
            // Only a verdict on the set itself is kept (it stays true of those
            // bytes); a failed transfer, or a refusal that a change of this
            // host's settings can lift (a key, a floor, a channel), is tried again.
            if FollowState.isVerdictOnTheSet(error.code.rawValue) {
                state.refusedDigest = digest
                state.refusedCode = error.code.rawValue
                state.save(stateFile)
            }
            say(FollowState.isVerdictOnTheSet(error.code.rawValue) ? "refused" : "failed", digest, error: error)
            return false
        }
    }
}
