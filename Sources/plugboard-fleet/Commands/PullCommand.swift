import PlugboardCommandLine
import PlugboardFleet

/// `plugboard pull REF --plugins DIR`.
enum PullCommand: CLICommand {
    static let spec = CommandSpec(
        name: "pull",
        abstract: FleetCommands.summaries[1].abstract,
        discussion: """
        Fetches the set REF names (by tag, or pinned with @sha256:DIGEST) for this platform into a \
        staging folder beside DIR, and checks it before anything lands in DIR: every blob against its \
        digest, the lock file's signature as a host requiring signatures checks it (a trusted key, \
        expiry, a sequence no lower than the last accepted for DIR, the channel), every file against \
        the lock file. Then exchanges the staging folder with DIR in one step, so a running host \
        sees the old set or the new, and keeps the old one for `plugboard rollback`. The same lock \
        file already installed: nothing changes. Exits 0 installed or unchanged, 1 with the code of \
        the first check that failed (DIR untouched), 64 on wrong usage.
        """,
        options: [FleetOptions.plugins] + FleetOptions.trust + [FleetOptions.platform, FleetOptions.plainHTTP, FleetOptions.stallWindow, CommandSpec.json],
        positionals: [.init(name: "ref", help: "HOST[:PORT]/REPOSITORY[:TAG] or HOST[:PORT]/REPOSITORY@sha256:DIGEST")])

    static func run(_ arguments: ParsedArguments) throws(UsageError) -> Int32 {
        let json = arguments.flag("--json")
        let reference = try FleetOptions.reference(arguments.positionals[0], arguments, command: spec.name)
        let directory = try FleetOptions.directory(arguments, command: spec.name)
        let platform = try FleetOptions.platform(arguments, command: spec.name) ?? .current
        let stallWindow = try FleetOptions.stallWindow(arguments, command: spec.name)
        guard let (signatures, _) = try FleetOptions.signatures(arguments, command: spec.name) else { return ExitStatus.failure }
        do throws(FleetError) {
            let report = try SetInstall.run(reference.manifestName, from: RegistryClient(reference, stallWindow: stallWindow), subject: reference.description, platform: platform,
                                            installer: SetInstaller(directory: directory, signatures: signatures), json: json)
            SetInstall.print(report, json: json)
            return ExitStatus.success
        } catch {
            return FleetOptions.fail(error, json: json)
        }
    }
}
