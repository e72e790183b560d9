import PlugboardCommandLine
import PlugboardFleet

/// `plugboard publish DIR REF`: a signed set to a registry.
enum PublishCommand: CLICommand {
    static let spec = CommandSpec(
        name: "publish",
        abstract: FleetCommands.summaries[0].abstract,
        discussion: """
        Pushes every file of the set in DIR (each .so, lib/, plugboard.lock and plugboard.lock.minisig) \
        as one OCI artifact (artifact type application/vnd.plugboard.set.v1): a manifest per platform \
        under an image index, tagged REF. Blobs the registry already has are not sent again. The set \
        must be signed and match its lock file. The platform is read from the .so files; --also adds \
        another platform's set (its own signed folder). Prints the index's digest: pin hosts to it \
        with REF@DIGEST. Credentials: PLUGBOARD_REGISTRY_USERNAME and PLUGBOARD_REGISTRY_PASSWORD, \
        else ~/.docker/config.json. Exits 0 when published, 1 when refused or the registry failed, 64 on wrong usage.
        """,
        options: [
            .init(long: "--also", valueName: "dirs", help: "More sets of the same plugins for other platforms: folders, comma-separated, each DIR or DIR=OS/ARCH."),
            .init(long: "--platform", valueName: "os/arch", help: "The platform of DIR's set when its .so files do not say (linux/amd64, linux/arm64)."),
            .init(long: "--allow-unsigned", help: "Publish a set with no signature (only for hosts that do not require signatures; said loudly)."),
            FleetOptions.plainHTTP, CommandSpec.json,
        ],
        positionals: [.init(name: "dir", help: "The signed set's folder."), .init(name: "ref", help: "HOST[:PORT]/REPOSITORY[:TAG]")])

    static func run(_ arguments: ParsedArguments) throws(UsageError) -> Int32 {
        let json = arguments.flag("--json")
        let reference = try FleetOptions.reference(arguments.positionals[1], arguments, command: spec.name)
        guard reference.digest == nil else { throw UsageError(message: "publish to a tag, not a digest (the digest is printed)", command: spec.name) }
        let platform = try FleetOptions.platform(arguments, command: spec.name)
        let allowUnsigned = arguments.flag("--allow-unsigned")
        var folders: [(String, Platform?)] = [(arguments.positionals[0], platform)]
        for item in arguments.value("--also")?.split(separator: ",") ?? [] {
            let parts = item.split(separator: "=", maxSplits: 1)
            guard let folder = parts.first.map(String.init), !folder.isEmpty else { continue }
            guard parts.count == 1 || Platform(String(parts[1])) != nil else {
                throw UsageError(message: "'--also' takes DIR or DIR=OS/ARCH (linux/arm64), got '\(item)'", command: spec.name)
            }
            folders.append((folder, parts.count == 2 ? Platform(String(parts[1])) : nil))
        }
        do throws(FleetError) {
            var inputs: [SetPublisher.Input] = []
            for (folder, platform) in folders {
                let input = try SetPublisher.input(folder, platform: platform, allowUnsigned: allowUnsigned)
                if inputs.contains(where: { $0.platform == input.platform }) {
                    throw FleetError(.init("platform-repeated"), folder, reason: "a second set for \(input.platform)", fix: "give one set per platform")
                }
                inputs.append(input)
            }
            if allowUnsigned, inputs.contains(where: { !$0.files.contains { $0.title == SetFiles.signatureName } }) {
                Terminal.writeErr(Terminal.style("warning:", .yellow, stderr: true) + " publishing an UNSIGNED set: hosts that require signatures refuse it, and nothing proves who made it\n")
            }
            let client = RegistryClient(reference)
            let report = try SetPublisher.publish(inputs, to: client, progress: FleetOptions.progress(json: json))
            FleetOptions.endProgress(json: json)
            if json {
                JSONOutput.print(report)
            } else {
                Terminal.write("Published \(report.files) files (\(report.platforms.joined(separator: ", "))) to \(Terminal.safe(report.reference)): "
                    + "\(report.blobsSent) blobs sent (\(report.bytesSent) bytes), \(report.blobsSkipped) already there (the files and the empty config)\n\(report.digest)\n")
            }
            return ExitStatus.success
        } catch {
            FleetOptions.endProgress(json: json)
            return FleetOptions.fail(error, json: json)
        }
    }
}
