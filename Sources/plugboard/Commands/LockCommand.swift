import Foundation
import PlugboardHost

/// `plugboard lock --plugins DIR`: records what may be loaded from DIR.
enum LockCommand: CLICommand {
    static let spec = CommandSpec(
        name: "lock",
        abstract: "Write a lock file of DIR's plugins: id, version, file name and SHA-256 of each.",
        discussion: """
        Examines every file of DIR again, like `list --rescan` (no plugin code runs in this \
        process), and writes, for every plugin that is available, its file name and the id, version \
        and SHA-256 of the very bytes that were checked and scanned (the file is never read twice), \
        and for every interface library of DIR/lib/ its file name and SHA-256, to \
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
        configuration.recordsSHA256 = true
        // Every file admitted and scanned now: the cache may not stand in for either.
        guard let (host, records) = PluginsOption.loadHost(configuration, start: .discover, rescan: true) else {
            return ExitStatus.failure
        }
        defer { host.shutdown() }
        var entries: [LockFile.Entry] = []
        for record in records {
            guard record.status == .available, let id = record.id, let version = record.version, let sha256 = record.sha256 else {
                Terminal.writeErr("left out: \(Terminal.safe(record.path)) (\(record.status.rawValue)\(record.code.map { ": \($0)" } ?? ""))\n")
                continue
            }
            entries.append(LockFile.Entry(
                file: URL(fileURLWithPath: record.path).lastPathComponent, id: id, version: version.description, sha256: sha256))
        }
        var libraries: [LockFile.Library] = []
        for library in host.interfaceLibraries {
            guard let sha256 = library.sha256 else {
                Terminal.writeErr("left out: \(Terminal.safe(library.path)) (interface library refused: \(library.error?.code.rawValue ?? "not admitted"))\n")
                continue
            }
            libraries.append(LockFile.Library(file: URL(fileURLWithPath: library.path).lastPathComponent, sha256: sha256))
        }
        let output = arguments.value("--output") ?? LockFile.defaultPath(for: directory)
        do {
            try LockFile(plugins: entries, libraries: libraries).write(to: output)
        } catch {
            Terminal.error("cannot write \(output): \(error)")
            return ExitStatus.failure
        }
        Terminal.write("Locked \(entries.count) plugin\(entries.count == 1 ? "" : "s")"
            + (libraries.isEmpty ? "" : " and \(libraries.count) interface librar\(libraries.count == 1 ? "y" : "ies")") + " in \(output)\n")
        return ExitStatus.success
    }
}
