import PlugboardCommandLine
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import PlugboardDemo
import PlugboardHost

/// `--plugins DIR`, shared by every command that runs a host on a directory.
enum PluginsOption {
    static let option = CommandSpec.Option(
        long: "--plugins", short: "-p", valueName: "dir", help: "Directory holding the plugin .so files (required).")

    static let config = CommandSpec.Option(
        long: "--config", short: "-c", valueName: "file", help: "Host configuration (JSON): toggles, denied services, overrides.")
    static let data = CommandSpec.Option(
        long: "--data", valueName: "dir", help: "Data directory for plugin storage (default: .plugboard-data).")
    static let cache = CommandSpec.Option(
        long: "--cache", valueName: "dir",
        help: "Registry cache and crash journal (default: $XDG_CACHE_HOME/plugboard or ~/.cache/plugboard).")
    static let scanTimeout = CommandSpec.Option(
        long: "--scan-timeout", valueName: "seconds", help: "Time limit for scanning one plugin file (default 10).")
    static let rescan = CommandSpec.Option(
        long: "--rescan", help: "Examine every file again: ignore the registry cache and retry quarantined files.")
    static let locked = CommandSpec.Option(
        long: "--locked", help: "Load only the files DIR/plugboard.lock lists, with their SHA-256 (see `plugboard lock`).")

    static let requireSignatures = CommandSpec.Option(
        long: "--require-signatures",
        help: "Load nothing unless DIR/plugboard.lock has a valid, unexpired signature (plugboard.lock.minisig) by a --trusted-key key, with a sequence no lower than the last accepted.")
    static let trustedKey = CommandSpec.Option(
        long: "--trusted-key", valueName: "files",
        help: "Public key files (minisign format, comma-separated) whose signatures on DIR/plugboard.lock are trusted; without --require-signatures an unsigned lock file still counts and taints the host.")
    static let channel = CommandSpec.Option(
        long: "--channel", valueName: "name", help: "Refuse a signed lock file made for another release channel (lock-channel).")
    static let sequenceFloor = CommandSpec.Option(
        long: "--sequence-floor", valueName: "n",
        help: "With --require-signatures: the lowest sequence accepted while no accepted one is recorded (the first use); without it such a set is refused (lock-sequence-unknown).")
    static let sequenceRecords = CommandSpec.Option(
        long: "--sequence-records", valueName: "dir",
        help: "The folder of the records of accepted sequences, shared with `plugboard pull` and `follow` (default: signed-locks in the --cache folder).")

    static let allowUnsafe = CommandSpec.Option(
        long: "--allow-unsafe-directories",
        help: "Development only: load plugin files whoever owns them or can write to their folders (also \(DirectoryTrust.environmentOptOut)=1, true or yes); reported as a warning.")

    static let isolate = CommandSpec.Option(
        long: "--isolate", valueName: "ids",
        help: "Run these plugins (comma-separated ids) each in a child process of its own: a crash or hang costs a call, not the host (docs/isolation.md).")
    static let isolateAll = CommandSpec.Option(
        long: "--isolate-all", help: "Run every plugin in a child process of its own (unless the --config file says \"isolated\": false for it).")

    static let sandbox = CommandSpec.Option(
        long: "--sandbox", valueName: "ids",
        help: "Run these plugins (comma-separated ids) each in a sandboxed child: only the runtime, its own storage and the host's services (docs/sandbox.md). Refused with sandbox-unavailable where this machine cannot hold every layer.")
    static let sandboxAll = CommandSpec.Option(
        long: "--sandbox-all", help: "Run every plugin in a sandboxed child (unless the --config file says \"sandboxed\": false for it).")
    static let sandboxBestEffort = CommandSpec.Option(
        long: "--sandbox-best-effort", help: "Start sandboxed plugins with the layers this machine offers, report the gap and taint the host, instead of refusing them.")

    static let resourceBounds = CommandSpec.Option(
        long: "--resource-bounds", valueName: "mode",
        help: "Where no cgroup can bound isolated plugins' children (memory, tasks, CPU; set per plugin with \"resources\" in the --config file): best-effort (default: start them, warn once) or required (refuse them with resource-bounds-unavailable). See `plugboard doctor`.")

    static let scannerSandbox = CommandSpec.Option(
        long: "--scanner-sandbox", valueName: "mode",
        help: "The scanners' sandbox: best-effort (default: the layers this machine offers, a gap reported and the host tainted), required (scan nothing where a layer is missing) or off (not advised).")

    /// What every command that starts a host accepts: configuration, data,
    /// cache and scan limit.
    static let host: [CommandSpec.Option] = [
        config, data, cache, scanTimeout, locked, requireSignatures, trustedKey, channel, sequenceFloor, sequenceRecords, isolate, isolateAll, sandbox, sandboxAll,
        sandboxBestEffort, resourceBounds, scannerSandbox, allowUnsafe,
    ]

    /// The directory checks: on unless `--allow-unsafe-directories` or the environment turns them off.
    static func trust(_ arguments: ParsedArguments) -> DirectoryTrust {
        let environment = ProcessInfo.processInfo.environment[DirectoryTrust.environmentOptOut]
        let optedOut = arguments.flag(allowUnsafe.long) || ["1", "true", "yes"].contains(environment?.lowercased() ?? "")
        return optedOut ? .unenforced : .enforced
    }

    /// The host configuration from `--config` and `--data`.
    static func configuration(_ arguments: ParsedArguments, pluginsDirectory: String?, command: String, defaultData: String? = ".plugboard-data") throws(UsageError) -> PluginHost.Configuration {
        var scanner = ScannerSettings()
        switch arguments.value(scannerSandbox.long) {
        case nil, "best-effort"?: break
        case "required"?: scanner.sandbox?.enforcement = .required
        case "off"?: scanner.sandbox = nil
        case let other?:
            throw UsageError(message: "'--scanner-sandbox' takes best-effort, required or off, got '\(other)'", command: command)
        }
        if let text = arguments.value(scanTimeout.long) {
            guard let seconds = Double(text), seconds > 0, seconds <= 3600 else {
                throw UsageError(message: "'--scan-timeout' takes seconds between 0 and 3600, got '\(text)'", command: command)
            }
            scanner.timeout = .milliseconds(Int(seconds * 1000))
        }
        var configuration = PluginHost.Configuration.with(
            pluginsDirectory: pluginsDirectory,
            settings: arguments.value(config.long).map(HostSettings.load(from:)) ?? HostSettings(),
            dataDirectory: arguments.value(data.long) ?? defaultData,
            cacheDirectory: arguments.value(cache.long), scanner: scanner,
            lockFile: arguments.flag(locked.long) ? pluginsDirectory.map(LockFile.defaultPath(for:)) : nil,
            trust: trust(arguments))
        configuration.trust.requiresSignatures = arguments.flag(requireSignatures.long)
        if let files = arguments.value(trustedKey.long) {
            configuration.trust.trustedKeyFiles = files.split(separator: ",").map { String($0) }.filter { !$0.isEmpty }
            guard !configuration.trust.trustedKeyFiles.isEmpty else {
                throw UsageError(message: "'--trusted-key' takes public key files separated by commas, got '\(files)'", command: command)
            }
        }
        configuration.trust.lockChannel = arguments.value(channel.long)
        if let text = arguments.value(sequenceFloor.long) {
            guard let floor = UInt64(text) else {
                throw UsageError(message: "'--sequence-floor' takes a sequence number (0 or more), got '\(text)'", command: command)
            }
            configuration.trust.sequenceFloor = floor
        }
        configuration.trust.sequenceRecords = arguments.value(sequenceRecords.long)
        if configuration.trust.requiresSignatures && configuration.trust.trustedKeyFiles.isEmpty {
            throw UsageError(message: "'--require-signatures' needs the publisher's public key: add '--trusted-key FILE'", command: command)
        }
        if arguments.flag(isolateAll.long) { configuration.isolation.others = .isolated }
        // `plugboard bisect` runs checks with some plugins kept out.
        configuration.disableFromEnvironment()
        if let ids = arguments.value(isolate.long) {
            let list = ids.split(separator: ",").map { $0.trimmingBlanks() }
            guard !list.isEmpty, list.allSatisfy({ !$0.isEmpty }) else {
                throw UsageError(message: "'--isolate' takes plugin ids separated by commas, got '\(ids)'", command: command)
            }
            for id in list { configuration.isolation.plugins[id] = .isolated }
        }
        var sandboxed = PluginIsolation.sandboxed
        if arguments.flag(sandboxBestEffort.long) { sandboxed.sandbox?.enforcement = .bestEffort }
        if arguments.flag(sandboxAll.long) { configuration.isolation.others = sandboxed }
        if let ids = arguments.value(sandbox.long) {
            let list = ids.split(separator: ",").map { $0.trimmingBlanks() }
            guard !list.isEmpty, list.allSatisfy({ !$0.isEmpty }) else {
                throw UsageError(message: "'--sandbox' takes plugin ids separated by commas, got '\(ids)'", command: command)
            }
            for id in list { configuration.isolation.plugins[id] = sandboxed }
        }
        switch arguments.value(resourceBounds.long) {
        case nil, "best-effort"?: break
        case "required"?:
            configuration.isolation.others.limits.bounds = .required
            for id in configuration.isolation.plugins.keys { configuration.isolation.plugins[id]?.limits.bounds = .required }
        case let other?:
            throw UsageError(message: "'--resource-bounds' takes best-effort or required, got '\(other)'", command: command)
        }
        // What an isolated plugin prints reaches the user as it happens,
        // on stderr, marked with the plugin's id.
        configuration.observability.diagnosticSink = { diagnostic in
            guard diagnostic.code == "plugin-output" else { return }
            Terminal.writeErr("\(Terminal.safe(diagnostic.plugin ?? "plugin")): \(diagnostic.message)\n")
        }
        // A command-line tool owns its process: Ctrl-C during a plugin's
        // init or activate is a hang the next start must know of.
        configuration.crashJournal.handlesInterruptSignals = true
        return configuration
    }

    /// For commands that examine files to record what they are (`lock`,
    /// `install`): no lock file or signature in force, and the SHA-256 of
    /// every admitted file recorded.
    static func recordingConfiguration(_ arguments: ParsedArguments, pluginsDirectory: String?, command: String) throws(UsageError) -> PluginHost.Configuration {
        var configuration = try self.configuration(arguments, pluginsDirectory: pluginsDirectory, command: command)
        configuration.trust.lockFile = nil
        configuration.trust.requiresSignatures = false
        configuration.trust.trustedKeyFiles = []
        configuration.recordsSHA256 = true
        return configuration
    }

    /// How far `loadHost` takes the plugins.
    enum Start {
        /// Discover only: no plugin code runs in this process.
        case discover
        /// Discover, then activate `startup` plugins; the rest when first used.
        case lazily
        /// Discover, then activate everything.
        case everything
    }

    /// Prints the host's diagnostics (configuration problems...) on stderr.
    static func reportDiagnostics(_ host: PluginHost) {
        for diagnostic in host.diagnostics {
            let style: Terminal.Style = diagnostic.severity == .error ? .red : .yellow
            Terminal.writeErr(Terminal.style("\(diagnostic.severity.rawValue):", style, stderr: true) + " \(Terminal.safe("\(diagnostic)"))\n")
        }
    }

    /// The directory given with `--plugins`; a usage error without one.
    static func directory(_ arguments: ParsedArguments, command: String) throws(UsageError) -> String {
        guard let directory = arguments.value(option.long) else {
            throw UsageError(message: "missing '--plugins <dir>'", command: command)
        }
        return directory
    }

    /// A host on `directory` declaring the SDK's extension points, with
    /// everything loaded; nil (the error printed) if the directory cannot be read.
    /// Host diagnostics go to stderr unless the command reports them itself.
    static func loadHost(
        _ configuration: PluginHost.Configuration, start: Start, rescan: Bool = false, printingDiagnostics: Bool = true
    ) -> (PluginHost, [PluginRecord])? {
        let host = PluginHost(configuration: configuration)
        host.declareDemoExtensionPoints()
        do {
            let records: [PluginRecord]
            switch start {
            case .discover: records = try host.discover(rescan: rescan)
            case .lazily: records = try host.start(rescan: rescan)
            case .everything:
                let discovered = try host.discover(rescan: rescan)
                host.activateAll()
                records = host.current(discovered)
            }
            if printingDiagnostics { reportDiagnostics(host) }
            return (host, records)
        } catch {
            Terminal.error("\(Terminal.safe(error.description)) [\(error.code)]")
            return nil
        }
    }
}
