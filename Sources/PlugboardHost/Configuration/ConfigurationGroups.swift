// The groups of ``PluginHost/Configuration``, each a struct of its own so
// later settings join a group without changing the others.
import Plugboard
import PlugboardCore
import PlugboardServices

extension PluginHost.Configuration {
    /// Where the host keeps what it writes.
    public struct Paths: Sendable {
        /// Where the storage service keeps each plugin's data
        /// (`<data>/<plugin id>/`). Without one, storage is denied.
        public var data: String?
        /// Where the registry cache and the crash journal live (default:
        /// `$XDG_CACHE_HOME/plugboard`, else `~/.cache/plugboard`, else a
        /// private `plugboard-cache-<uid>` in the temp directory). Used only
        /// when it passes the same trust check as a plugins directory;
        /// otherwise the warning `cache-directory-untrusted` says why.
        public var cache: String?
        /// Where the private copies of plugin files are written before they
        /// are loaded: each host makes a new folder of its own in it, removed
        /// at shutdown (default: under `$XDG_RUNTIME_DIR` or the temp
        /// directory). Used only when nobody else can write it or a folder
        /// above it; otherwise the warning `images-directory-untrusted` says
        /// why and the default is used.
        public var images: String?

        public init(data: String? = nil, cache: String? = nil, images: String? = nil) {
            self.data = data
            self.cache = cache
            self.images = images
        }
    }

    /// Which plugin files are trusted as code (docs/operations.md).
    public struct Trust: Sendable {
        /// Who may change a plugin file and its folders (``DirectoryTrust``):
        /// enforced unless turned off.
        public var directories: DirectoryTrust
        /// A lock file (written by `plugboard lock`; docs/operations.md): only the files it lists, with their
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
        /// The lowest sequence number accepted when no record of an accepted
        /// one exists (the first use, or a record deleted): with
        /// ``requiresSignatures`` and no floor, such a set is refused
        /// (`lock-sequence-unknown`), since a replayed older set would look
        /// the same. A record that cannot be read is refused whatever the
        /// floor (`lock-state-unreadable`). Records only go up: the floor
        /// never lowers one.
        public var sequenceFloor: UInt64?
        /// The folder of the records of the last accepted sequence, one
        /// file per lock file, shared with `plugboard pull` and `follow`
        /// (`--sequence-records DIR`), which raise a record as they install
        /// a set. Nil: `signed-locks` in the state directory
        /// (``Paths/cache``). It passes the state directory's ownership
        /// checks (this user's or root's, nobody else may write it); a host
        /// may read a folder that only root's `follow` writes
        /// (docs/fleet.md, "The sequence record").
        public var sequenceRecords: String?
        /// Public key files (minisign's format, read when the host is made)
        /// of the keys the host's own people sign with: a plugin covered by
        /// a lock file whose signature holds with one of them is *signed by
        /// the host*; every other runs as ``Isolation/unsigned`` says.
        public var ownKeyFiles: [String] = []

        public init(directories: DirectoryTrust = .enforced, lockFile: String? = nil) {
            self.directories = directories
            self.lockFile = lockFile
        }
    }

    /// Where plugins' code runs (docs/isolation.md).
    public struct Isolation: Sendable {
        /// By plugin id: in the host's process or in a child process of its
        /// own. A plugin not named here follows `"isolated"` in the settings
        /// file, then ``others``.
        public var plugins: [String: PluginIsolation] = [:]
        /// Where the other plugins run: in process unless set (`plugboard
        /// --isolate-all` sets `PluginIsolation.isolated`).
        public var others: PluginIsolation = .inProcess
        /// Where a plugin the host did not sign itself runs (not covered by a
        /// lock file signed with one of ``Trust/ownKeyFiles``), unless named
        /// in ``plugins`` or the settings file; nil: as ``others``. Set
        /// `.sandboxed` to sandbox every plugin a third party or nobody signed.
        public var unsigned: PluginIsolation?
        /// How often an isolated plugin may crash before it is quarantined.
        public var restartBudget = RestartBudget()
        /// Longest time an isolated plugin's child may take to start (the
        /// handshake, the plugin's init and activate); also the longest a
        /// lookup waits for a plugin's start under way on another thread
        /// (then it returns what is active, with `start-still-running`).
        public var startTimeout: Duration = .seconds(10)
        /// The program an isolated plugin's child runs: `plugboard-child`,
        /// which SwiftPM builds beside every program that depends on
        /// PlugboardHost. Nil (the default): beside this process's
        /// executable. Without it, an isolated plugin fails to start with
        /// `isolation-child-missing`.
        public var childProgram: String?

        public init() {}
    }

    /// The crash journal's settings (docs/loading.md, "Crash journal").
    public struct CrashJournalSettings: Sendable {
        /// A SIGINT/SIGTERM that stops the host while a plugin's init,
        /// activate or journaled call has run this long counts as a hang:
        /// the next start quarantines that plugin.
        public var hangThreshold: Duration
        /// Whether the host installs SIGINT and SIGTERM handlers for its crash
        /// journal (only where their action is still the default). Off by
        /// default: a library does not take over a process's signals. A host
        /// that handles them itself calls ``PluginHost/interrupted(signal:)``
        /// before it exits instead. The `plugboard` tool turns it on.
        public var handlesInterruptSignals = false

        public init(hangThreshold: Duration = .seconds(5)) {
            self.hangThreshold = hangThreshold
        }
    }

    /// Where the host's own reports go.
    public struct Observability: Sendable {
        /// Where plugin log messages go.
        public var logSink: LogSink
        /// Hears every host diagnostic as it is reported, on the thread that
        /// reported it, for hosts that keep their own log. Must not call back into the host.
        public var diagnosticSink: (@Sendable (HostDiagnostic) -> Void)?
        /// How many host diagnostics ``PluginHost/diagnostics`` keeps (the
        /// latest; older ones are let go, so a plugin failing on every event
        /// cannot grow the host without bound).
        public var diagnosticsLimit = 1_000
        /// Hears every change of an isolated plugin's child (also recorded
        /// as diagnostics), on the thread where it happened. Must not call back into the host.
        public var isolationEvents: (@Sendable (IsolationEvent) -> Void)?

        public init(logSink: LogSink = .standardError) {
            self.logSink = logSink
        }
    }

    /// Live installs (``PluginHost/refresh()`` on its own).
    public struct Watching: Sendable {
        /// Refresh the host when a plugin file is installed, replaced or
        /// removed in the plugins directory, once ``PluginHost/start(rescan:)``
        /// ran (inotify; Linux). Each refresh is reported as the diagnostic
        /// `plugins-refreshed`. Off by default.
        public var pluginsDirectory = false
        /// Also refresh on changes of `lib/` (interface libraries). Off by
        /// default: a library already loaded can never be unloaded, so a new
        /// version only reaches plugins loaded after it; restart the host to
        /// give every plugin the new library.
        public var interfaceLibraries = false

        public init() {}
    }
}
