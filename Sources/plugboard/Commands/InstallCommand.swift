import PlugboardCommandLine
import FoundationEssentials
import PlugboardHost
#if canImport(Glibc)
import Glibc
#endif

/// `plugboard install FILE --plugins DIR`: the safe install.
enum InstallCommand: CLICommand {
    static let spec = CommandSpec(
        name: "install",
        abstract: "Install a plugin file into a plugins directory safely (checked, then renamed into place).",
        discussion: """
        Checks FILE first, as a host would (trust, static checks, a scan in a scanner process; \
        nothing runs in this process), and refuses it, leaving DIR untouched, unless it is \
        available. Then writes its bytes under a temporary name in DIR, flushes them to disk and \
        renames them into place, so a host looking at DIR (`PluginHost.refresh()`, SIGHUP to \
        `plugboard dev`) never sees a half-written file, and checks that the bytes installed are \
        the bytes checked. With a lock file (DIR/plugboard.lock) it updates that file's entry \
        first; a signed lock file (DIR/plugboard.lock.minisig) is refused, since changing it would \
        void its signature. Exits 0 when installed, 1 when FILE is refused or cannot be installed, 64 on wrong \
        usage.
        """,
        options: [PluginsOption.option,
                  .init(long: "--as", valueName: "name", help: "The file name in DIR (default: FILE's name); must end in .so."),
                  CommandSpec.json] + PluginsOption.host,
        positionals: [.init(name: "file", help: "The plugin .so file to install.")])

    struct Report: Encodable {
        let id: String
        let version: String
        let file: String
        let sha256: String
        let lockUpdated: Bool
    }

    static func run(_ arguments: ParsedArguments) throws(UsageError) -> Int32 {
        let directory = try PluginsOption.directory(arguments, command: spec.name)
        let source = arguments.positionals[0]
        let name = arguments.value("--as") ?? URL(fileURLWithPath: source).lastPathComponent
        guard name.hasSuffix(".so"), !name.contains("/"), !name.hasPrefix(".") else {
            throw UsageError(message: "'--as' takes a file name ending in .so, without '/', got '\(name)'", command: spec.name)
        }
        // Said before anything else: the file would otherwise be refused
        // naming a temporary file in it.
        do { _ = try PluginDirectory.existingDirectory(directory) } catch {
            Terminal.error("\(Terminal.safe(error.description)); create it (mkdir -p \(Terminal.safe(directory))) or pass the one your host reads with --plugins; nothing was installed")
            return ExitStatus.failure
        }
        // A signed lock file is the publisher's: changing it would void its signature.
        let lockPath = LockFile.defaultPath(for: directory)
        if FileManager.default.fileExists(atPath: lockPath + ".minisig") {
            Terminal.error("\(Terminal.safe(lockPath)) is signed (\(Terminal.safe(lockPath)).minisig): installing would change it and void "
                + "its signature; add the file to the set and sign it again (`plugboard lock --sign KEYFILE`), or install the "
                + "publisher's signed set (docs/operations.md); nothing was installed")
            return ExitStatus.failure
        }
        // 1. Checked as a host would, before DIR is touched.
        let configuration = try PluginsOption.recordingConfiguration(arguments, pluginsDirectory: nil, command: spec.name)
        let checker = PluginHost(configuration: configuration)
        checker.declareDemoExtensionPoints()
        // Against the interface libraries it will meet: DIR's lib/, not the lib/ beside FILE.
        let refusedLibraries = checker.installInterfaceLibraries(of: directory).filter { $0.error != nil }
        let record = checker.discover(files: [source], rescan: true).first
        checker.shutdown()
        guard let record, record.status == .available, let id = record.id, let version = record.version, let sha256 = record.sha256 else {
            var reason = record?.error.map { "[\($0.code.rawValue)] \($0.reason)" } ?? "it could not be examined"
            // Why a library it may need was not there.
            for library in refusedLibraries {
                if let error = library.error { reason += "; \(library.path): interface library refused [\(error.code.rawValue)]: \(error.reason)" }
            }
            Terminal.error("refused \(Terminal.safe(source)): \(Terminal.safe(reason)); nothing was installed")
            return ExitStatus.failure
        }
        guard let bytes = FileManager.default.contents(atPath: source).map([UInt8].init),
              LockFile.sha256(of: bytes) == sha256 else {
            Terminal.error("\(Terminal.safe(source)) changed while it was checked; nothing was installed: install it again")
            return ExitStatus.failure
        }
        // 2. The lock entry first: a locked host admits the new bytes once they arrive.
        var lockUpdated = false
        if FileManager.default.fileExists(atPath: lockPath) {
            do {
                let lock = try LockFile.load(lockPath)
                let entries = lock.plugins.filter { $0.file != name && $0.id != id }
                    + [LockFile.Entry(file: name, id: id, version: version.description, sha256: sha256, size: bytes.count)]
                try LockFile(plugins: entries, libraries: lock.libraries).write(to: lockPath)
                lockUpdated = true
            } catch {
                Terminal.error("cannot update \(Terminal.safe(lockPath)): \(error); nothing was installed")
                return ExitStatus.failure
            }
        }
        // 3. Under a temporary name in DIR, flushed, renamed into place.
        let target = "\(directory)/\(name)"
        if let problem = place(bytes, at: target, in: directory) {
            Terminal.error("cannot install \(Terminal.safe(target)): \(problem)")
            return ExitStatus.failure
        }
        if arguments.flag("--json") {
            JSONOutput.print(Report(id: id, version: version.description, file: target, sha256: sha256, lockUpdated: lockUpdated))
        } else {
            Terminal.write("Installed \(id) \(version) as \(Terminal.safe(target))" + (lockUpdated ? "; \(Terminal.safe(lockPath)) updated" : "") + "\n")
        }
        return ExitStatus.success
    }

    /// Writes `bytes` to a new temporary file in `directory` (hidden, so a
    /// watching host ignores it), fsyncs it, renames it to `target` and
    /// fsyncs the directory; the reason if not.
    static func place(_ bytes: [UInt8], at target: String, in directory: String) -> String? {
        let temporary = "\(directory)/.\(URL(fileURLWithPath: target).lastPathComponent).partial-\(getpid())"
        return replaceFile(target, with: bytes, temporary: temporary, mode: 0o755, syncingFolder: true)
    }
}
