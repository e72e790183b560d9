import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import Plugboard
import PlugboardCore
import PlugboardServices
import PlugboardLoading

extension PluginHost {
    /// How the host loads plugins and what it offers them: where plugins
    /// are, then one group per concern, each with defaults, so a host sets
    /// only what it needs.
    ///
    /// ```swift
    /// var configuration = PluginHost.Configuration(pluginsDirectory: "/opt/app/plugins")
    /// configuration.paths.data = "/var/lib/app/plugins"
    /// configuration.isolation.plugins["com.example.untrusted"] = .isolated
    /// configuration.observability.diagnosticSink = { print($0) }
    /// ```
    public struct Configuration: Sendable {
        /// Directory scanned by ``PluginHost/start(rescan:)`` and ``PluginHost/discover(rescan:)``.
        public var pluginsDirectory: String?
        /// The host configuration file's contents: toggles, denied services,
        /// configuration overrides (see ``HostSettings/load(from:)``).
        public var settings: HostSettings
        /// Plugin ids kept out, with where that was decided (shown in `disabled` records).
        public var disabledPlugins: [String: String]
        /// Where plugin data, the registry cache and private copies go.
        public var paths: Paths
        /// Which files are trusted as code: directory checks, lock file, signatures.
        public var trust: Trust
        /// Which plugins run in a child process, and how children are kept.
        public var isolation: Isolation
        /// How plugin files are scanned in child processes.
        public var scanner: ScannerSettings
        /// How much each plugin may store (bytes, keys, value size).
        public var storageQuota: StorageQuota
        /// How the crash journal tells a hang from a person stopping the host.
        public var crashJournal: CrashJournalSettings
        /// Where plugin logs, host diagnostics and isolation events go.
        public var observability: Observability
        /// Whether the plugins directory is watched for installs.
        public var watching: Watching
        /// Record each admitted file's SHA-256 (``PluginRecord/sha256``) even
        /// without a lock file: what `plugboard lock` writes.
        package var recordsSHA256 = false

        public init(
            pluginsDirectory: String? = nil, disabledPlugins: [String: String] = [:],
            settings: HostSettings = HostSettings(), dataDirectory: String? = nil,
            logSink: LogSink = .standardError, imagesDirectory: String? = nil, cacheDirectory: String? = nil,
            scanner: ScannerSettings = ScannerSettings(), hangThreshold: Duration = .seconds(5),
            storageQuota: StorageQuota = StorageQuota(), lockFile: String? = nil, trust: DirectoryTrust = .enforced
        ) {
            self.pluginsDirectory = pluginsDirectory
            self.disabledPlugins = disabledPlugins
            self.settings = settings
            paths = Paths(data: dataDirectory, cache: cacheDirectory, images: imagesDirectory)
            self.trust = Trust(directories: trust, lockFile: lockFile)
            isolation = Isolation()
            self.scanner = scanner
            self.storageQuota = storageQuota
            crashJournal = CrashJournalSettings(hangThreshold: hangThreshold)
            observability = Observability(logSink: logSink)
            watching = Watching()
        }

        /// The environment variable `plugboard bisect` sets for the check it
        /// runs: plugin ids, comma-separated, to keep out.
        package static let disableVariable = "PLUGBOARD_DISABLE"

        /// Keeps out the plugins named in `PLUGBOARD_DISABLE` (what `plugboard
        /// bisect` sets), each shown `disabled` with that source. For a host
        /// that wants to be bisected; the `plugboard` tool's hosts call it.
        public mutating func disableFromEnvironment() {
            guard let text = ProcessInfo.processInfo.environment[Self.disableVariable] else { return }
            for id in text.split(separator: ",").map({ $0.trimmingBlanks() }) where !id.isEmpty {
                disabledPlugins[id] = disabledPlugins[id] ?? "\(Self.disableVariable) (set by plugboard bisect)"
            }
        }
    }
}
