import PlugboardCommandLine
import Plugboard
import PlugboardHost

/// `plugboard list --plugins DIR [--json] [--strict]`
enum ListCommand: CLICommand {
    static let spec = CommandSpec(
        name: "list",
        abstract: "List every candidate plugin file of a directory with its status.",
        discussion: """
        Examines each *.so file of DIR for a host that declares the SDK's Commands and the demo's screen-section \
        points and shows its id, version, what it provides, its activation triggers and its \
        status (available, active, rejected, quarantined, failed, disabled) with the reason and a \
        stable code. No plugin code runs in this process: new or changed files are loaded in \
        scanner processes, and what they learn is kept in the registry cache, so a second list \
        opens no plugin file. A file that crashes, exits or hangs while scanned is quarantined \
        until it changes or --rescan is given. Exits 0 when the scan ran, even if files were \
        rejected; 1 with --strict if any file was rejected, quarantined or failed, or if DIR \
        cannot be read; 64 on wrong usage.
        """,
        options: [
            PluginsOption.option
        ] + PluginsOption.host + [
            PluginsOption.rescan,
            CommandSpec.json,
            .init(long: "--strict", help: "Exit 1 if any file was rejected, quarantined or failed."),
        ])

    struct Output: Encodable {
        let directory: String
        let host: HostSummary
        /// What the registry cache saved: files answered from it, opened, scanned.
        let discovery: DiscoveryStatistics
        let plugins: [PluginRecord]
        /// Why the host ran code it could not verify (empty: it did not).
        let taint: [TaintEntry]
        /// The signature the lock file was accepted with (--require-signatures, --trusted-key).
        let signedLock: SignedLock?
    }

    static func run(_ arguments: ParsedArguments) throws(UsageError) -> Int32 {
        let directory = try PluginsOption.directory(arguments, command: spec.name)
        guard let (host, records) = PluginsOption.loadHost(
            try PluginsOption.configuration(arguments, pluginsDirectory: directory, command: spec.name), start: .discover,
            rescan: arguments.flag(PluginsOption.rescan.long))
        else { return ExitStatus.failure }
        defer { host.shutdown() }
        if arguments.flag("--json") {
            JSONOutput.print(Output(
                directory: PluginDirectory.absolutePath(directory), host: HostSummary(host), discovery: host.lastDiscovery,
                plugins: records, taint: host.taint, signedLock: host.signedLock))
        } else {
            Terminal.write(RecordText.list(
                records, directory: PluginDirectory.absolutePath(directory), interfaceLibraries: host.lastDiscovery.interfaceLibraries,
                taint: host.taint, signedLock: host.signedLock) + "\n")
        }
        let problems = records.contains { [.rejected, .failed, .quarantined].contains($0.status) }
        return arguments.flag("--strict") && problems ? ExitStatus.failure : ExitStatus.success
    }
}

/// The host side of every comparison, for JSON output.
struct HostSummary: Encodable {
    let sdkVersion: String
    let sdkABI: String
    let toolchain: String
    let cacheDirectory: String
    let interfaces: [[String: String]]

    init(_ host: PluginHost) {
        sdkVersion = host.baseline.sdkVersion
        sdkABI = host.baseline.sdkABI.description
        toolchain = host.baseline.toolchain
        cacheDirectory = host.cacheDirectory
        interfaces = host.registry.declaredInterfaces.map { ["interface": $0.id, "version": $0.version.description] }
    }
}
