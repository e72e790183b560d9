import FoundationEssentials
import PlugboardCommandLine
import PlugboardFleet
#if canImport(Glibc)
import Glibc
#endif

/// `plugboard import LAYOUT --plugins DIR`.
enum ImportCommand: CLICommand {
    static let spec = CommandSpec(
        name: "import",
        abstract: FleetCommands.summaries[5].abstract,
        discussion: """
        Installs a set from an OCI image layout folder or tar file (`plugboard export` writes both) exactly as \
        `plugboard pull` installs one from a registry: every blob checked against its digest, the \
        signature and the lock file checked before anything lands in DIR, then one switch. \
        --name picks the set when the layout holds several (default: its only one). Exits 0 \
        installed or unchanged, 1 with the code of the first check that failed (DIR untouched), 64 on wrong usage.
        """,
        options: [FleetOptions.plugins] + FleetOptions.trust + [
            .init(long: "--name", valueName: "name", help: "The set's name in the layout's index.json (the tag it was exported from)."),
            FleetOptions.platform, CommandSpec.json,
        ],
        positionals: [.init(name: "layout", help: "An OCI image layout folder, or a tar file of one.")])

    static func run(_ arguments: ParsedArguments) throws(UsageError) -> Int32 {
        let json = arguments.flag("--json")
        let directory = try FleetOptions.directory(arguments, command: spec.name)
        let platform = try FleetOptions.platform(arguments, command: spec.name) ?? .current
        guard let (signatures, _) = try FleetOptions.signatures(arguments, command: spec.name) else { return ExitStatus.failure }
        let given = arguments.positionals[0]
        do throws(FleetError) {
            // An archive is unpacked first (only the names a layout has), into a folder of this process.
            var unpacked: String?
            defer { if let unpacked { try? FileManager.default.removeItem(atPath: unpacked) } }
            if LayoutArchive.isArchive(given) {
                // A fresh folder of this process's (mkdtemp), never one found there.
                var template = Array((FileManager.default.temporaryDirectory.path + "/plugboard-import-XXXXXX").utf8CString)
                guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
                    throw FleetError(.installFailed, FileManager.default.temporaryDirectory.path, reason: String(cString: strerror(errno)), fix: "set TMPDIR to a folder with space")
                }
                let folder = String(cString: made)
                unpacked = folder
                try LayoutArchive.extract(given, into: folder)
            }
            let layout = ImageLayout(path: unpacked ?? given)
            let report = try SetInstall.run(arguments.value("--name") ?? "", from: layout, subject: given, platform: platform,
                                            installer: SetInstaller(directory: directory, signatures: signatures), json: json)
            SetInstall.print(report, json: json)
            return ExitStatus.success
        } catch {
            return FleetOptions.fail(error, json: json)
        }
    }
}
