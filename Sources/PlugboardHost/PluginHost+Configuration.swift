import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import Plugboard

extension PluginHost {
    /// How the host loads plugins and what it offers them.
    public struct Configuration: Sendable {
        /// Directory scanned by ``PluginHost/start(rescan:)`` and ``PluginHost/discover(rescan:)``.
        public var pluginsDirectory: String?
        /// Plugin ids kept out, with where that was decided (shown in `disabled` records).
        public var disabledPlugins: [String: String]
        /// The host configuration file's contents: toggles, denied services,
        /// configuration overrides (see ``HostSettings/load(from:)``).
        public var settings: HostSettings
        /// Where the storage service keeps each plugin's data
        /// (`<dataDirectory>/<plugin id>/`). Without one, storage is denied.
        public var dataDirectory: String?
        /// Where plugin log messages go.
        public var logSink: LogSink
        /// Where the private copies of plugin files are written before they
        /// are loaded: each host makes a new folder of its own in it, removed
        /// at shutdown (default: under `$XDG_RUNTIME_DIR` or the temp
        /// directory). Used only when nobody else can write it or a folder
        /// above it; otherwise the warning `images-directory-untrusted` says
        /// why and the default is used.
        public var imagesDirectory: String?
        /// Where the registry cache and the crash journal live (default:
        /// `$XDG_CACHE_HOME/plugboard`, else `~/.cache/plugboard`, else a
        /// private `plugboard-cache-<uid>` in the temp directory). Used only
        /// when it passes the same trust check as a plugins directory;
        /// otherwise the warning `cache-directory-untrusted` says why.
        public var cacheDirectory: String?
        /// How plugin files are scanned in child processes.
        public var scanner: ScannerSettings
        /// How much each plugin may store (bytes, keys, value size).
        public var storageQuota: StorageQuota
        /// A lock file (``LockFile``): only the files it lists, with their
        /// SHA-256, are loaded; anything else is refused before any of its code runs.
        public var lockFile: String?
        /// Refuse every file unless the lock file (``lockFile``, else the
        /// plugins directory's `plugboard.lock`) carries a valid, unexpired
        /// signature (`plugboard.lock.minisig`) by a key of
        /// ``trustedKeyFiles``, with a sequence number no lower than the last
        /// one this host accepted; only then do its hashes count. Read when
        /// the host is made: the host's ``PluginHost/configuration`` cannot
        /// change, so code cannot turn it off once the host runs (as Linux's
        /// `module.sig_enforce`). Codes: `signature-missing`,
        /// `signature-invalid`, `key-unknown`, `lock-expired`,
        /// `lock-rollback`, `lock-channel` (docs/operations.md).
        public var requiresSignatures = false
        /// Public key files in minisign's format (`plugboard keygen` writes
        /// `KEYFILE.pub`; a file may hold several keys), each passing the
        /// same ownership checks as the lock file, read again when one
        /// changes (key rotation). With keys but without
        /// ``requiresSignatures`` signatures are only preferred: a lock file
        /// whose signature does not hold still counts by its hashes, and
        /// the host is tainted (`unsigned-set`).
        public var trustedKeyFiles: [String] = []
        /// The release channel this host follows: a signed lock file naming
        /// another is refused (`lock-channel`). Any channel when nil.
        public var lockChannel: String?

        /// Which plugin files are trusted as code, by who can change them
        /// (``DirectoryTrust``): enforced unless turned off.
        public var trust: DirectoryTrust
        /// A SIGINT/SIGTERM that stops the host while a plugin's init,
        /// activate or journaled call has run this long counts as a hang:
        /// the next start quarantines that plugin (see docs/loading.md, "Crash journal").
        public var hangThreshold: Duration
        /// Whether the host installs SIGINT and SIGTERM handlers for its crash
        /// journal (only where their action is still the default). Off by
        /// default: a library does not take over a process's signals. A host
        /// that handles them itself calls ``PluginHost/interrupted(signal:)``
        /// before it exits instead. The `plugboard` tool turns it on.
        public var handlesInterruptSignals = false
        /// How many host diagnostics ``PluginHost/diagnostics`` keeps (the
        /// latest; older ones are let go, so a plugin failing on every event
        /// cannot grow the host without bound).
        public var diagnosticsLimit = 1_000
        /// Hears every host diagnostic as it is reported, on the thread that
        /// reported it, for hosts that keep their own log. Must not call back into the host.
        public var diagnosticSink: (@Sendable (HostDiagnostic) -> Void)?

        public init(
            pluginsDirectory: String? = nil, disabledPlugins: [String: String] = [:],
            settings: HostSettings = HostSettings(), dataDirectory: String? = nil,
            logSink: LogSink = .standardError, imagesDirectory: String? = nil, cacheDirectory: String? = nil,
            scanner: ScannerSettings = ScannerSettings(), hangThreshold: Duration = .seconds(5),
            storageQuota: StorageQuota = StorageQuota(), lockFile: String? = nil, trust: DirectoryTrust = .enforced
        ) {
            self.trust = trust
            self.storageQuota = storageQuota
            self.lockFile = lockFile
            self.pluginsDirectory = pluginsDirectory
            self.disabledPlugins = disabledPlugins
            self.settings = settings
            self.dataDirectory = dataDirectory
            self.logSink = logSink
            self.imagesDirectory = imagesDirectory
            self.cacheDirectory = cacheDirectory
            self.scanner = scanner
            self.hangThreshold = hangThreshold
        }

        /// Where each plugin's code runs, by plugin id: in the host's process
        /// or in a child process of its own (docs/isolation.md). A plugin not
        /// named here follows `"isolated"` in ``settings``, then
        /// ``defaultIsolation``.
        public var isolation: [String: PluginIsolation] = [:]
        /// Where plugins named neither in ``isolation`` nor in ``settings`` run:
        /// in process unless set (`plugboard --isolate-all` sets `PluginIsolation.isolated`).
        public var defaultIsolation: PluginIsolation = .inProcess
        /// How often an isolated plugin may crash before it is quarantined.
        public var restartBudget = RestartBudget()
        /// Longest time an isolated plugin's child may take to start (the
        /// handshake, the plugin's init and activate).
        public var isolatedStartTimeout: Duration = .seconds(10)
        /// Hears every change of an isolated plugin's child (also recorded
        /// as diagnostics), on the thread where it happened. Must not call back into the host.
        public var isolationEvents: (@Sendable (IsolationEvent) -> Void)?

        /// Where plugin `id`'s code runs: ``isolation``, else the settings
        /// file's `"isolated"`, else ``defaultIsolation``.
        public func isolation(of id: String) -> PluginIsolation {
            if let chosen = isolation[id] { return chosen }
            if let isolated = settings.plugins[id]?.isolated {
                var chosen = defaultIsolation
                chosen.isolated = isolated
                return chosen
            }
            return defaultIsolation
        }

        /// Record each admitted file's SHA-256 (``PluginRecord/sha256``) even
        /// without a lock file: what `plugboard lock` writes.
        package var recordsSHA256 = false

        /// Refresh the host (``PluginHost/refresh()``) when a plugin file is
        /// installed, replaced or removed in ``pluginsDirectory``, once
        /// ``PluginHost/start(rescan:)`` ran (inotify; Linux). Each refresh is
        /// reported as the diagnostic `plugins-refreshed`. Off by default.
        public var watchesPluginsDirectory = false
        /// Also refresh on changes of `lib/` (interface libraries). Off by
        /// default: a library already loaded can never be unloaded, so a new
        /// version only reaches plugins loaded after it; restart the host to
        /// give every plugin the new library.
        public var watchesInterfaceLibraries = false

        /// The environment variable `plugboard bisect` sets for the check it
        /// runs: plugin ids, comma-separated, to keep out.
        public static let disableVariable = "PLUGBOARD_DISABLE"

        /// Keeps out the plugins named in ``disableVariable`` (what `plugboard
        /// bisect` sets), each shown `disabled` with that source. For a host
        /// that wants to be bisected; the `plugboard` tool's hosts call it.
        public mutating func disableFromEnvironment() {
            guard let text = ProcessInfo.processInfo.environment[Self.disableVariable] else { return }
            for id in text.split(separator: ",").map({ $0.trimmingBlanks() }) where !id.isEmpty {
                disabledPlugins[id] = disabledPlugins[id] ?? "\(Self.disableVariable) (set by plugboard bisect)"
            }
        }

        /// Every disabled id with its source: ``disabledPlugins`` and
        /// `"enabled": false` entries of ``settings``.
        var allDisabled: [String: String] {
            var all = disabledPlugins
            for (id, plugin) in settings.plugins where !plugin.enabled {
                all[id] = all[id] ?? "\(settings.file ?? "the host configuration") (plugins.\(id).enabled is false)"
            }
            return all
        }
    }
}
