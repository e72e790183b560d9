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

        /// A configuration scanning `pluginsDirectory`, every group at its
        /// defaults: set the rest through the groups.
        public init(pluginsDirectory: String? = nil) {
            self.pluginsDirectory = pluginsDirectory
            disabledPlugins = [:]
            settings = HostSettings()
            paths = Paths(data: nil, cache: nil, images: nil)
            trust = Trust(directories: .enforced, lockFile: nil)
            isolation = Isolation()
            scanner = ScannerSettings()
            storageQuota = StorageQuota()
            crashJournal = CrashJournalSettings(hangThreshold: .seconds(5))
            observability = Observability(logSink: .standardError)
            watching = Watching()
        }

        /// The flat initialiser of host 2.x: each of its values has its
        /// place in a group now (`paths.data`, `paths.cache`, `paths.images`,
        /// `observability.logSink`, `trust.lockFile`, `trust.directories`,
        /// `crashJournal.hangThreshold`), which is where to set them.
        @available(*, deprecated, message: "use init(pluginsDirectory:) and set the groups (paths, trust, observability, crashJournal); removed in host 4.0.0")
        public init(
            pluginsDirectory: String? = nil, disabledPlugins: [String: String] = [:],
            settings: HostSettings = HostSettings(), dataDirectory: String? = nil,
            logSink: LogSink = .standardError, imagesDirectory: String? = nil, cacheDirectory: String? = nil,
            scanner: ScannerSettings = ScannerSettings(), hangThreshold: Duration = .seconds(5),
            storageQuota: StorageQuota = StorageQuota(), lockFile: String? = nil, trust: DirectoryTrust = .enforced
        ) {
            self = .with(
                pluginsDirectory: pluginsDirectory, disabledPlugins: disabledPlugins, settings: settings, dataDirectory: dataDirectory,
                logSink: logSink, imagesDirectory: imagesDirectory, cacheDirectory: cacheDirectory, scanner: scanner,
                hangThreshold: hangThreshold, storageQuota: storageQuota, lockFile: lockFile, trust: trust)
        }

        /// Many settings at once, each set in its group: what the tests and
        /// the benchmark write (package access: a host sets the groups).
        package static func with(
            pluginsDirectory: String? = nil, disabledPlugins: [String: String] = [:],
            settings: HostSettings = HostSettings(), dataDirectory: String? = nil,
            logSink: LogSink = .standardError, imagesDirectory: String? = nil, cacheDirectory: String? = nil,
            scanner: ScannerSettings = ScannerSettings(), hangThreshold: Duration = .seconds(5),
            storageQuota: StorageQuota = StorageQuota(), lockFile: String? = nil, trust: DirectoryTrust = .enforced
        ) -> Configuration {
            var configuration = Configuration(pluginsDirectory: pluginsDirectory)
            configuration.disabledPlugins = disabledPlugins
            configuration.settings = settings
            configuration.paths = Paths(data: dataDirectory, cache: cacheDirectory, images: imagesDirectory)
            configuration.trust = Trust(directories: trust, lockFile: lockFile)
            configuration.scanner = scanner
            configuration.storageQuota = storageQuota
            configuration.crashJournal = CrashJournalSettings(hangThreshold: hangThreshold)
            configuration.observability = Observability(logSink: logSink)
            return configuration
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
