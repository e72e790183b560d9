@_spi(PlugboardHost) import Plugboard
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The facade a host author holds: declare extension points, start on a
/// plugins directory, read providers from ``registry``, shut down.
///
/// ```swift
/// let host = PluginHost(configuration: .init(pluginsDirectory: "/opt/app/plugins"))
/// host.declare(Commands.self)
/// try host.start()
/// for command in host.registry.providers(of: Commands.self) { print(command.name) }
/// host.shutdown()
/// ```
///
/// No code of a plugin runs in the host before it is known to be safe and
/// needed: a file is checked from its bytes, then loaded in a scanner
/// process (see ``ScannerSettings``); what the scan learns is cached, so
/// later starts open no plugin file. A compatible plugin is `available` until
/// the first lookup of an extension point it provides or one of its
/// activation triggers; only then is it loaded into the host, from a private
/// copy of the bytes that were checked. A file that fails is recorded with
/// its reason (see ``PluginRecord``) and the others carry on. Thread-safe.
///
/// ## Topics
///
/// ### Setting up
/// - ``init(configuration:)``
/// - ``Configuration``
/// - ``configuration``
/// - ``declare(_:)``
/// - ``provideService(_:_:)``
///
/// ### Discovering and activating
/// - ``start(rescan:)``
/// - ``discover(rescan:)``
/// - ``loadAll(rescan:)``
/// - ``examine(files:rescan:)``
/// - ``load(files:)``
/// - ``activate(pluginIDs:)``
/// - ``activateAll()``
/// - ``journaled(call:_:)``
/// - ``shutdown()``
///
/// ### Reading providers and state
/// - ``registry``
/// - ``records``
/// - ``activePluginIDs``
/// - ``diagnostics``
/// - ``lastDiscovery``
/// - ``cacheDirectory``
/// - ``baseline``
/// - ``Baseline``
///
/// ### Reaching the host services
/// - ``router``
/// - ``events``
/// - ``routes``
/// - ``storage(for:)``
///
/// ### Hot reload
/// - ``load(reloadable:)``
/// - ``reload(_:from:verification:)``
public final class PluginHost: Sendable {
    /// How the host loads plugins and what it offers them.
    public struct Configuration: Sendable {
        /// Directory scanned by ``PluginHost/start(rescan:)``, ``PluginHost/discover(rescan:)`` and ``PluginHost/loadAll(rescan:)``.
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
        /// are loaded (default: a new per-process directory under
        /// `$XDG_RUNTIME_DIR` or the temp directory, removed at shutdown).
        public var imagesDirectory: String?
        /// Where the registry cache and the crash journal live (default:
        /// `$XDG_CACHE_HOME/plugboard`, else `~/.cache/plugboard`).
        public var cacheDirectory: String?
        /// How plugin files are scanned in child processes.
        public var scanner: ScannerSettings
        /// How much each plugin may store (bytes, keys, value size).
        public var storageQuota: StorageQuota
        /// A lock file (``LockFile``): only the files it lists, with their
        /// SHA-256, are loaded; anything else is refused before any of its code runs.
        public var lockFile: String?
        /// Which plugin files are trusted as code, by who can change them
        /// (``DirectoryTrust``): enforced unless turned off.
        public var trust: DirectoryTrust
        /// A SIGINT/SIGTERM that stops the host while a plugin's init,
        /// activate or journaled call has run this long counts as a hang:
        /// the next start quarantines that plugin (see "Crash journal" in the README).
        public var hangThreshold: Duration

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

        /// Record each admitted file's SHA-256 (``PluginRecord/sha256``) even
        /// without a lock file: what `plugboard lock` writes.
        package var recordsSHA256 = false

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

    /// Where providers are read.
    public let registry = ExtensionRegistry()
    public let configuration: Configuration
    let environment = HostEnvironment.current
    let state = Mutex(State())
    /// Serialises discovery, activation, reloads and shutdown: each sees the
    /// live set the previous one left. (Plugin code runs under it: a plugin
    /// must not call back into its host's lifecycle.)
    let lifecycle = Mutex(())
    /// The one way a file becomes code here (holds the private copies and the lock file).
    let admission: Admission
    let cache: RegistryCache
    let journal: CrashJournal
    let services: HostServices
    /// A scanner process kept ready for the next reload's verification.
    let spareScanner = ScannerSpare()

    struct State {
        var records: [PluginRecord] = []
        /// In activation order.
        var live: [LivePlugin] = []
        /// Compatible, admitted, not active yet; by plugin id.
        var available: [String: AvailablePlugin] = [:]
        /// Whether the journal's dead notes were read (once per host).
        var recovered = false
        var lastDiscovery = DiscoveryStatistics()
        /// Every interface library admitted or refused so far.
        var interfaceLibraries: [InterfaceLibrary] = []
    }

    /// An interface library of a plugins directory's `lib/` folder, as admitted.
    package struct InterfaceLibrary: Sendable {
        package let path: String
        /// Its SHA-256, when admitted with one computed (a lock file, ``Configuration/recordsSHA256``).
        package let sha256: String?
        /// Why it was refused.
        package let error: PluginLoadError?
    }

    /// The interface libraries admitted or refused so far (`plugboard lock` records them).
    package var interfaceLibraries: [InterfaceLibrary] { state.withLock { $0.interfaceLibraries } }

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        self.admission = Admission(
            environment: environment, trust: configuration.trust,
            lock: configuration.lockFile.map { LockPolicy(path: $0, checksOwnership: configuration.trust.enforced) },
            copies: PrivateCopies(directory: configuration.imagesDirectory, checksOwnership: configuration.trust.enforced),
            recordsSHA256: configuration.recordsSHA256)
        self.services = HostServices(
            configuration: configuration.settings, dataDirectory: configuration.dataDirectory,
            logSink: configuration.logSink, storageQuota: configuration.storageQuota)
        // The cache and the journal steer what loads and what is quarantined:
        // used only from a directory as trusted as a plugins directory.
        let cacheDirectory = PluginDirectory.absolutePath(configuration.cacheDirectory ?? RegistryCache.defaultDirectory())
        let untrusted = configuration.trust.enforced
            ? RegistryCache.untrustedReason(cacheDirectory) ?? RegistryCache.untrustedReason(cacheDirectory + "/journal") : nil
        if let untrusted {
            services.report(HostDiagnostic(.warning, code: "cache-directory-untrusted",
                message: "\(cacheDirectory): not used for the registry cache or the crash journal: \(untrusted); "
                    + "every start scans every plugin file and a crash is not remembered. Fix it as the reason says, "
                    + "or set another cache directory (PluginHost.Configuration.cacheDirectory, `--cache DIR`)",
                file: cacheDirectory))
        }
        self.cache = RegistryCache(directory: cacheDirectory, environment: HostEnvironment.current, isUsable: untrusted == nil)
        self.journal = CrashJournal(
            directory: cacheDirectory + "/journal", hangThreshold: configuration.hangThreshold, isUsable: untrusted == nil)
        // Weak: the registry and services live inside the host.
        registry.setActivator { [weak self] interfaceID in self?.activateProviders(of: interfaceID) }
        services.triggers.setActivator { [weak self] pluginIDs in self?.activate(pluginIDs: pluginIDs) }
    }

    /// Problems noticed outside loading: cache, configuration, events, routes.
    /// (Storage errors are thrown to the plugin that hit them.)
    public var diagnostics: [HostDiagnostic] { services.allDiagnostics }

    /// Offers a service of the host's own to plugins that declare `key.id`
    /// (the host's Service Provider Interface). Call before loading.
    public func provideService<Key: Services.Key>(_ key: Key.Type, _ make: @escaping @Sendable (_ pluginID: String) -> Key.Service) {
        services.provide(Key.id) { make($0) }
    }

    /// Declares an extension point. Providers of undeclared interfaces are
    /// ignored (with a warning on the plugin's record).
    public func declare<Point: ExtensionPoint>(_ point: Point.Type) {
        registry.declare(DeclaredExtensionPoint(point))
    }

    /// What the host knows about every candidate file so far.
    public var records: [PluginRecord] { state.withLock { $0.records } }

    /// Ids of active plugins, in activation order.
    public var activePluginIDs: [String] { state.withLock { $0.live.map(\.id) } }

    /// What the last discovery or examination did (how many files the cache
    /// answered for, how many were opened and scanned).
    public var lastDiscovery: DiscoveryStatistics { state.withLock { $0.lastDiscovery } }

    /// Where the registry cache and crash journal are kept.
    public var cacheDirectory: String { cache.directory }

    // MARK: - Starting

    /// Finds, checks and scans every candidate of
    /// ``Configuration/pluginsDirectory`` without running any plugin code in
    /// this process: compatible plugins become `available`.
    ///
    /// - Parameter rescan: examine every file again, ignoring the cache and
    ///   lifting quarantines (`plugboard list --rescan`).
    /// - Returns: one record per candidate file, in file-name order.
    /// - Throws: only when the directory itself cannot be read.
    @discardableResult
    public func discover(rescan: Bool = false) throws(PluginDirectory.ScanError) -> [PluginRecord] {
        guard let directory = configuration.pluginsDirectory else { return [] }
        let candidates = try PluginDirectory.scan(directory)
        let libraries = installInterfaceLibraries(from: directory)
        let records = lifecycle.withLock { _ in admitLocked(examineLocked(candidates, rescan: rescan)) }
        state.withLock { $0.lastDiscovery.interfaceLibraries = libraries.filter { $0.error == nil }.map(\.path) }
        let known = Set(records.compactMap(\.id))
        for id in configuration.settings.plugins.keys.sorted() where !known.contains(id) {
            services.report(HostDiagnostic(.warning, code: "config-unknown-plugin",
                message: "configures plugin \(id), which is not in \(directory); ignored",
                file: configuration.settings.file, keyPath: "plugins.\(id)"))
        }
        return records
    }

    /// Admits the interface libraries of `directory`'s `lib/` folder like
    /// plugins (trust, one read, ELF checks, lock entry) and puts their copies
    /// beside the private copies plugins are loaded from (here and in
    /// scanners), so a plugin of a host's own extension point finds the
    /// library it needs even in a host that does not link it (the
    /// `plugboard` tool). A library installed by an earlier discovery stays.
    private func installInterfaceLibraries(from directory: String) -> [InterfaceLibrary] {
        var ownership = OwnershipCheck()
        let installed = PluginDirectory.interfaceLibraries(in: directory).map { library -> InterfaceLibrary in
            // Installed by an earlier discovery of this host: its image may be mapped already.
            if let earlier = state.withLock({ $0.interfaceLibraries.first { $0.path == library && $0.error == nil } }) {
                return earlier
            }
            switch admission.admit(PluginDirectory.candidate(at: library), as: .interfaceLibrary, ownership: &ownership) {
            case let .success(image):
                return InterfaceLibrary(path: library, sha256: image.sha256, error: nil)
            case let .failure(refusal):
                services.report(HostDiagnostic(.error, code: refusal.error.code.rawValue,
                    message: "\(library): interface library refused: \(refusal.error.reason); plugins that need it will fail to load"))
                return InterfaceLibrary(path: library, sha256: nil, error: refusal.error)
            }
        }
        state.withLock { state in
            for library in installed {
                state.interfaceLibraries.removeAll { $0.path == library.path }
                state.interfaceLibraries.append(library)
            }
        }
        return installed
    }

    /// ``discover(rescan:)``, then activates the plugins that declared the
    /// `startup` trigger. The others activate when first needed.
    @discardableResult
    public func start(rescan: Bool = false) throws(PluginDirectory.ScanError) -> [PluginRecord] {
        let records = try discover(rescan: rescan)
        let startup = state.withLock { state in
            Set(state.available.values.filter { $0.plugin.activation.contains("startup") }.map(\.plugin.id))
        }
        activate(pluginIDs: startup)
        return current(records)
    }

    /// ``discover(rescan:)``, then activates every available plugin now
    /// (for hosts that want everything loaded up front).
    @discardableResult
    public func loadAll(rescan: Bool = false) throws(PluginDirectory.ScanError) -> [PluginRecord] {
        let records = try discover(rescan: rescan)
        activateAll()
        return current(records)
    }

    /// Examines specific files (absolute or relative paths) like
    /// ``discover(rescan:)``: compatible ones become `available`.
    @discardableResult
    public func examine(files: [String], rescan: Bool = false) -> [PluginRecord] {
        let candidates = PluginDirectory.candidates(at: files)
        // The interface libraries beside each file, as discovery of its folder would install them.
        var libraries: [InterfaceLibrary] = []
        for folder in Set(candidates.map { OwnershipCheck.parent(of: $0.path) }).sorted() {
            libraries += installInterfaceLibraries(from: folder)
        }
        let records = lifecycle.withLock { _ in admitLocked(examineLocked(candidates, rescan: rescan)) }
        state.withLock { $0.lastDiscovery.interfaceLibraries = libraries.filter { $0.error == nil }.map(\.path) }
        return records
    }

    /// Examines specific files and activates the compatible ones.
    @discardableResult
    public func load(files: [String]) -> [PluginRecord] {
        let records = examine(files: files)
        activate(pluginIDs: Set(records.filter { $0.status == .available }.compactMap(\.id)))
        return current(records)
    }

    /// Activates every available plugin.
    public func activateAll() {
        activate(pluginIDs: state.withLock { Set($0.available.keys) })
    }

    /// Activates the given plugins if they are available (others are ignored).
    public func activate(pluginIDs: Set<String>) {
        guard !pluginIDs.isEmpty, !ExtensionRegistry.isActivating else { return }
        lifecycle.withLock { _ in activateLocked(pluginIDs) }
    }

    /// Activates the available plugins that provide `interfaceID`.
    func activateProviders(of interfaceID: String) {
        guard !ExtensionRegistry.isActivating else { return }
        lifecycle.withLock { _ in
            let ids = state.withLock { state in
                Set(state.available.values.filter { $0.plugin.provides.contains { $0.interface == interfaceID } }.map(\.plugin.id))
            }
            // Publishes the providers and what is still pending, in one update.
            activateLocked(ids)
        }
    }

    /// Runs `body`, a call into plugin `pluginID`'s code, with a crash-journal
    /// note: if the process dies inside, the next start quarantines the
    /// plugin (phase `call`). For calls a crash of which must not repeat on
    /// every start, such as a command the user runs; not for hot paths.
    public func journaled<Result, Failure: Error>(call pluginID: String, _ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        let live = state.withLock { state in state.live.first { $0.id == pluginID } }
        guard let live else { return try body() }
        // The identity of the file the running code came from, not of
        // whatever is installed now: a fixed build must not be blamed.
        let note = CrashJournal.Note(
            pluginID: pluginID, path: live.path, identity: live.identity, phase: .call, date: Quarantine.now())
        return try journal.record(note, body)
    }

    /// The latest record of each of `records`' files.
    func current(_ records: [PluginRecord]) -> [PluginRecord] {
        let latest = state.withLock { state in
            Dictionary(state.records.map { ($0.path, $0) }, uniquingKeysWith: { _, last in last })
        }
        return records.map { latest[$0.path] ?? $0 }
    }

    /// Deactivates every plugin in reverse activation order and empties the
    /// registry. Images stay mapped (they can never be unloaded). Clears this
    /// process's crash-journal note.
    public func shutdown() {
        lifecycle.withLock { _ in shutdownLocked() }
    }

    private func shutdownLocked() {
        let live = state.withLock { state in
            defer {
                state.live.removeAll()
                state.available.removeAll()
            }
            return state.live
        }
        registry.replaceProviders(of: Set(live.map(\.id)), with: [], pending: [])
        services.triggers.removeAll()
        // Plugin code under the lifecycle lock must not activate anything.
        ExtensionRegistry.$isActivating.withValue(true) {
            for plugin in live.reversed() {
                plugin.instance.deactivate()
                services.retire(plugin.id, generation: plugin.generation)
            }
        }
        journal.close()
        spareScanner.discard()
        admission.copies.removeIfPrivate()
    }
}

extension PluginHost {
    /// What every plugin is checked against: the SDK this host was built
    /// with and the toolchain of the Swift runtime it runs on.
    public struct Baseline: Sendable {
        /// The SDK release, such as `2.0.0`.
        public let sdkVersion: String
        /// The SDK ABI; a plugin's must have the same major and no greater minor.
        public let sdkABI: ABIVersion
        /// The Swift toolchain the host's runtime comes from; a plugin's must be the same.
        public let toolchain: String
    }

    /// What every plugin is checked against.
    public var baseline: Baseline {
        Baseline(
            sdkVersion: environment.sdkVersion, sdkABI: environment.sdkABI,
            toolchain: environment.runtimeToolchain ?? environment.compiledToolchain)
    }
}
