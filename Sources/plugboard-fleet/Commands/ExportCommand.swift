import FoundationEssentials
import PlugboardCommandLine
import PlugboardFleet
#if canImport(Glibc)
import Glibc
#endif

/// `plugboard export REF LAYOUT`: a set to an OCI image layout on disk.
enum ExportCommand: CLICommand {
    static let spec = CommandSpec(
        name: "export",
        abstract: FleetCommands.summaries[4].abstract,
        discussion: """
        Copies the set REF names, every platform, into LAYOUT, an OCI image layout folder \
        (oci-layout, index.json, blobs/sha256), or one tar file of it when LAYOUT ends in .tar, \
        checking every blob against its digest; the tag \
        is kept as the set's name in index.json. Carry the folder to a site without network \
        access and install it with `plugboard import LAYOUT --plugins DIR`, which checks it \
        again as `pull` does. Exits 0 when written, 1 when the registry failed or a check did, 64 on wrong usage.
        """,
        options: [FleetOptions.plainHTTP, CommandSpec.json],
        positionals: [.init(name: "ref", help: "HOST[:PORT]/REPOSITORY[:TAG] or HOST[:PORT]/REPOSITORY@sha256:DIGEST"),
                      .init(name: "layout", help: "The folder to write (made if missing), or FILE.tar.")])

    struct Report: Encodable {
        let ok = true
        let reference: String
        let digest: String
        let layout: String
        let blobs: Int
        let bytes: Int
    }

    static func run(_ arguments: ParsedArguments) throws(UsageError) -> Int32 {
        let json = arguments.flag("--json")
        let reference = try FleetOptions.reference(arguments.positionals[0], arguments, command: spec.name)
        let layout = arguments.positionals[1]
        do throws(FleetError) {
            let archive = LayoutArchive.isArchive(layout)
            let folder = archive ? layout + ".layout-\(getpid())" : layout
            defer { if archive { try? FileManager.default.removeItem(atPath: folder) } }
            let written = try ImageLayout.export(reference.manifestName, tag: reference.tag, from: RegistryClient(reference), to: folder, progress: FleetOptions.progress(json: json))
            if archive { try LayoutArchive.write(folder: folder, to: layout) }
            FleetOptions.endProgress(json: json)
            let report = Report(reference: reference.description, digest: written.digest, layout: layout, blobs: written.blobs, bytes: written.bytes)
            if json { JSONOutput.print(report) } else {
                Terminal.write("Exported \(Terminal.safe(reference.description)) (\(written.digest)) to \(Terminal.safe(layout)): \(written.blobs) blobs, \(written.bytes) bytes\n")
            }
            return ExitStatus.success
        } catch {
            FleetOptions.endProgress(json: json)
            return FleetOptions.fail(error, json: json)
        }
    }
}
