import FoundationEssentials
import PlugboardCommandLine
import PlugboardFleet
import PlugboardHost

/// `plugboard rollback --plugins DIR`: back to the set before the last install.
enum RollbackCommand: CLICommand {
    static let spec = CommandSpec(
        name: "rollback",
        abstract: FleetCommands.summaries[3].abstract,
        discussion: """
        Exchanges DIR with the set it held before the last `pull`, `follow` or `import` (kept \
        beside it as .DIR.previous), in one step; a second rollback undoes the first. That set is \
        older: hosts that require signatures refuse it (lock-rollback) while the record of DIR \
        holds a higher sequence. So rollback refuses unless --lower-sequence is given, which \
        checks the older set's signature and files and then lowers the record to its sequence \
        (said on stderr; `follow` never does this). The other way back keeps every record: sign \
        the older set again with a higher sequence and publish it (docs/fleet.md). Exits 0 when \
        switched, 1 when refused or nothing is kept, 64 on wrong usage.
        """,
        options: [FleetOptions.plugins] + FleetOptions.trust + [
            .init(long: "--lower-sequence", help: "Lower the recorded sequence of DIR to the older set's (the operator's explicit choice)."),
            CommandSpec.json,
        ])

    struct Report: Encodable {
        let ok = true
        let plugins: String
        let sequence: UInt64
        let channel: String
        let loweredFrom: UInt64?
    }

    static func run(_ arguments: ParsedArguments) throws(UsageError) -> Int32 {
        let json = arguments.flag("--json")
        let directory = try FleetOptions.directory(arguments, command: spec.name)
        guard let (signatures, _) = try FleetOptions.signatures(arguments, command: spec.name) else { return ExitStatus.failure }
        let installer = SetInstaller(directory: directory, signatures: signatures)
        do throws(FleetError) {
            // Checked, switched and recorded under the install lock: no pull or follow between.
            let report = try installer.withInstallLock { () throws(FleetError) -> Report in
                let previous = installer.previous
                guard FileManager.default.fileExists(atPath: previous + "/" + SetFiles.lockName) else {
                    throw FleetError(.noPreviousSet, previous, reason: "no earlier set is kept for \(installer.directory)", fix: "pull the set you want by its digest (`plugboard pull REF@sha256:... --plugins DIR`)")
                }
                let lowering = arguments.flag("--lower-sequence")
                let check = SetInstaller(directory: directory, signatures: lowering ? signatures.ignoringRecord() : signatures)
                let files = try SetFiles.read(previous).map { ($0.title, SHA256.hex($0.bytes)) }
                let signed: SignedLock
                switch try check.verify(staging: previous, files: files) {
                case let .install(verified), let .unchanged(verified): signed = verified
                }
                let last = signatures.lastAccepted(for: installer.lockFile)?.sequence
                let lock = FileManager.default.contents(atPath: previous + "/" + SetFiles.lockName).map(Array.init) ?? []
                let lowers = lowering && (last ?? 0) > signed.sequence
                // Going up, the record is raised first (never below the set in
                // DIR); going down, it is lowered after the swap, and the swap
                // is undone if it cannot be (a kill between leaves hosts
                // refusing the older set, never a record below the newer one).
                let saved = signatures.saveRecord(for: installer.lockFile)
                if !lowers { try installer.record(signed, lock: lock) }
                do throws(FleetError) { try installer.swapWithPrevious() } catch {
                    signatures.restoreRecord(saved, lockFile: installer.lockFile)
                    throw error
                }
                var lowered: UInt64?
                if lowers, let last {
                    if let problem = signatures.lowerRecord(to: signed, lockFile: installer.lockFile, lockSHA256: SHA256.hex(lock)) {
                        try? installer.swapWithPrevious()
                        throw FleetError(.recordUnwritable, installer.lockFile, reason: problem, fix: "make the records folder writable by this user; nothing was changed")
                    }
                    lowered = last
                    Terminal.writeErr("rollback: the recorded sequence of \(Terminal.safe(installer.lockFile)) was lowered from \(last) to \(signed.sequence) (--lower-sequence)\n")
                }
                return Report(plugins: installer.directory, sequence: signed.sequence, channel: signed.channel, loweredFrom: lowered)
            }
            if json {
                JSONOutput.print(report)
            } else {
                Terminal.write("Rolled back \(Terminal.safe(installer.directory)) to the set of sequence \(report.sequence) (channel \(Terminal.safe(report.channel)))\n")
            }
            return ExitStatus.success
        } catch {
            if error.code.rawValue == PluginLoadError.Code.lockRollback.rawValue {
                return FleetOptions.fail(FleetError(error.code, error.subject, reason: error.reason,
                    fix: "to run the older set anyway pass --lower-sequence (hosts then accept it), or sign it again with a higher sequence and publish it; nothing was changed"), json: json)
            }
            return FleetOptions.fail(error, json: json)
        }
    }
}
