import PlugboardCommandLine
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
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
        PluginHost.Configuration.trust.lockFile) then loads only those files, and only while their bytes \
        hash to the recorded value; anything else is refused before any of its code runs. Files that \
        are not available are left out and listed. With --sign KEYFILE (from `plugboard keygen`) it \
        also writes the lock file's signature, FILE.minisig, in minisign's format, whose trusted \
        comment carries a sequence number (--sequence, default: one more than the signature it \
        replaces), an expiry (--expires-days, default 30) and a channel (--channel, default stable). \
        Exits 0 when written, 1 if the directory cannot be read, a file cannot be written or the key \
        cannot be used, 64 on wrong usage.
        """,
        options: [
            PluginsOption.option,
            .init(long: "--output", short: "-o", valueName: "file", help: "Where to write the lock file (default: DIR/plugboard.lock)."),
            .init(long: "--sign", valueName: "keyfile", help: "Sign the lock file with this secret key (plugboard keygen): writes FILE.minisig."),
            .init(long: "--sequence", valueName: "n", help: "The signature's sequence number (default: one more than the one it replaces, else 1)."),
            .init(long: "--expires-days", valueName: "days", help: "Days until the signature expires (default 30, at most 36500)."),
            .init(long: "--channel", valueName: "name", help: "The release channel named in the signature (default stable)."),
        ] + [PluginsOption.cache, PluginsOption.scanTimeout, PluginsOption.allowUnsafe])

    static func run(_ arguments: ParsedArguments) throws(UsageError) -> Int32 {
        let directory = try PluginsOption.directory(arguments, command: spec.name)
        // The key and terms first: a key that cannot be used leaves the lock file as it was.
        let options = try signingOptions(arguments)
        var key: SigningKey?
        if let keyFile = arguments.value("--sign") {
            do {
                key = try SigningKey.load(keyFile)
            } catch {
                Terminal.error(Terminal.safe(error.description) + "; the lock file was not changed")
                return ExitStatus.failure
            }
        }
        let configuration = try PluginsOption.recordingConfiguration(arguments, pluginsDirectory: directory, command: spec.name)
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
                file: URL(fileURLWithPath: record.path).lastPathComponent, id: id, version: version.description, sha256: sha256,
                size: record.file?.size))
        }
        var libraries: [LockFile.Library] = []
        for library in host.interfaceLibraries {
            guard let sha256 = library.sha256 else {
                Terminal.writeErr("left out: \(Terminal.safe(library.path)) (interface library refused: \(library.error?.code.rawValue ?? "not admitted"))\n")
                continue
            }
            var info = stat()
            let size = stat(library.path, &info) == 0 ? Int(info.st_size) : nil
            libraries.append(LockFile.Library(file: URL(fileURLWithPath: library.path).lastPathComponent, sha256: sha256, size: size))
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
        if let key {
            guard let signed = sign(output, with: key, options) else { return ExitStatus.failure }
            Terminal.write("Signed it: \(signed)\n")
        }
        return ExitStatus.success
    }

    /// --sequence, --expires-days and --channel, checked before anything is written.
    static func signingOptions(_ arguments: ParsedArguments) throws(UsageError) -> (sequence: UInt64?, days: Double, channel: String) {
        var sequence: UInt64?
        if let text = arguments.value("--sequence") {
            guard let value = UInt64(text) else { throw UsageError(message: "'--sequence' takes a whole number, got '\(text)'", command: spec.name) }
            sequence = value
        }
        var days = 30.0
        if let text = arguments.value("--expires-days") {
            // At most 100 years: the expiry is written as a four-digit year.
            guard let value = Double(text), value > 0, value <= 36_500 else {
                throw UsageError(message: "'--expires-days' takes a number of days above 0 and at most 36500, got '\(text)'", command: spec.name)
            }
            days = value
        }
        let channel = arguments.value("--channel") ?? "stable"
        guard !channel.isEmpty, !channel.contains(" "), !channel.contains("\n") else {
            throw UsageError(message: "'--channel' takes one word, got '\(channel)'", command: spec.name)
        }
        return (sequence, days, channel)
    }

    /// Writes `lock.minisig`; its description, or nil after printing why not.
    static func sign(_ lock: String, with key: SigningKey, _ options: (sequence: UInt64?, days: Double, channel: String)) -> String? {
        let signaturePath = lock + ".minisig"
        let previous = (try? String(contentsOfFile: signaturePath, encoding: .utf8)).flatMap(LockSignature.init(text:))
        let sequence = options.sequence ?? (previous.flatMap { LockSignature.Terms(trustedComment: $0.trustedComment)?.sequence } ?? 0) + 1
        let terms = LockSignature.Terms(sequence: sequence, expires: Date().addingTimeInterval(options.days * 86_400), channel: options.channel)
        guard let bytes = FileManager.default.contents(atPath: lock).map([UInt8].init),
              let signature = LockSignature.sign(bytes, key: key, terms: terms) else {
            Terminal.error("cannot sign \(Terminal.safe(lock))")
            return nil
        }
        do {
            try signature.text.write(toFile: signaturePath, atomically: true, encoding: .utf8)
        } catch {
            Terminal.error("cannot write \(Terminal.safe(signaturePath)): \(error)")
            return nil
        }
        return "\(signaturePath) (key \(key.publicKey.idText), sequence \(sequence), channel \(options.channel))"
    }
}
