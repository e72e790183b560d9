import Foundation
import PlugboardHost

/// `plugboard lock --plugins DIR`: records what may be loaded from DIR.
enum LockCommand: CLICommand {
    static let spec = CommandSpec(
        name: "lock",
        abstract: "Write a lock file of DIR's plugins: id, version, file name and SHA-256 of each.",
        discussion: """
        Examines DIR like `list` (no plugin code runs in this process) and writes, for every plugin \
        that is available, its file name, id, version and the SHA-256 of its bytes to \
        DIR/plugboard.lock (or --output). A host started with `--locked` (or \
        PluginHost.Configuration.lockFile) then loads only those files, and only while their bytes \
        hash to the recorded value; anything else is refused before any of its code runs. Files that \
        are not available are left out and listed. Exits 0 when written, 1 if the directory cannot \
        be read or the file cannot be written, 64 on wrong usage.
        """,
        options: [
            PluginsOption.option,
            .init(long: "--output", short: "-o", valueName: "file", help: "Where to write the lock file (default: DIR/plugboard.lock)."),
        ] + [PluginsOption.cache, PluginsOption.scanTimeout, PluginsOption.allowUnsafe])

    static func run(_ arguments: ParsedArguments) throws(UsageError) -> Int32 {
        let directory = try PluginsOption.directory(arguments, command: spec.name)
        var configuration = try PluginsOption.configuration(arguments, pluginsDirectory: directory, command: spec.name)
        configuration.lockFile = nil
        guard let (host, records) = PluginsOption.loadHost(configuration, start: .discover, rescan: false) else {
            return ExitStatus.failure
        }
        defer { host.shutdown() }
        var entries: [LockFile.Entry] = []
        for record in records {
            guard record.status == .available, let id = record.id, let version = record.version else {
                Terminal.writeErr("left out: \(record.path) (\(record.status.rawValue))\n")
                continue
            }
            guard let bytes = FileManager.default.contents(atPath: record.resolvedPath ?? record.path) else {
                Terminal.error("cannot read \(record.path)")
                return ExitStatus.failure
            }
            entries.append(LockFile.Entry(
                file: URL(fileURLWithPath: record.path).lastPathComponent, id: id, version: version.description,
                sha256: LockFile.sha256(of: Array(bytes))))
        }
        let output = arguments.value("--output") ?? LockFile.defaultPath(for: directory)
        do {
            try LockFile(plugins: entries).write(to: output)
        } catch {
            Terminal.error("cannot write \(output): \(error)")
            return ExitStatus.failure
        }
        Terminal.write("Locked \(entries.count) plugin\(entries.count == 1 ? "" : "s") in \(output)\n")
        return ExitStatus.success
    }
}
