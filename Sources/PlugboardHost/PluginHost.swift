@_spi(PlugboardHost) import Plugboard
import Synchronization
import PlugboardCore
import PlugboardAdmission
import PlugboardRegistry
import PlugboardServices
import PlugboardCatalog
import PlugboardIsolation
import PlugboardLifecycle

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
/// needed: a file is admitted from its bytes (trust, static checks, lock
/// file), then loaded in a scanner process (see ``ScannerSettings``); what
/// the scan learns is cached, so later starts open no plugin file. A
/// compatible plugin is `available` until the first lookup of an extension
/// point it provides or one of its activation triggers; only then is it
/// admitted again and loaded into the host, from a private copy of the bytes
/// that were checked. A file that fails is recorded with its reason (see
/// ``PluginRecord``) and the others carry on. Thread-safe.
public final class PluginHost: Sendable {
    /// Where providers are read.
    public let registry: ExtensionRegistry
    public let configuration: Configuration
    /// Discovery, cache, admission, scanners: never runs plugin code here.
    let catalog: Catalog
    /// The owner of every plugin's life: activation, reload, shutdown, the crash journal.
    let lifecycle: Lifecycle
    let services: HostServices
    /// Why this host ran code it could not verify.
    let taintState: HostTaint
    /// One refresh at a time (the watcher's, an admin call's).
    private let refreshing = Mutex(())
    /// The plugins-directory watcher, once started.
    private let watching = DirectoryWatching()
    /// Resumes ``run()`` once the host has shut down.
    let ended = ShutdownSignal()

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        let parts = HostParts(configuration)
        (registry, services, catalog, lifecycle, taintState) = (parts.registry, parts.services, parts.catalog, parts.lifecycle, parts.taint)
        if configuration.crashJournal.handlesInterruptSignals { CrashJournal.installSignalHandlers() }
    }

    /// Offers a service of the host's own to plugins that declare `key.id`
    /// (the host's Service Provider Interface). Call before loading.
    public func provideService<Key: Services.Key>(_ key: Key.Type, _ make: @escaping @Sendable (_ pluginID: String) -> Key.Service) {
        services.provide(Key.id) { make($0) }
    }

    /// Declares an extension point. Providers of undeclared interfaces are
    /// ignored (with a warning on the plugin's record).
    ///
    /// - Parameters:
    ///   - point: the extension point type.
    ///   - isolatedCalls: the deadline and failure policy of calls to
    ///     isolated providers of the point (an `IsolatableExtensionPoint`).
    public func declare<Point: ExtensionPoint>(_ point: Point.Type, isolatedCalls: IsolatedCallPolicy = .standard) {
        lifecycle.declare(point, isolatedCalls: isolatedCalls)
    }

    // MARK: - Loading

    /// Admits and scans every candidate of ``Configuration/pluginsDirectory``
    /// (and its `lib/` interface libraries) without running any plugin code
    /// in this process: compatible plugins become `available`.
    ///
    /// - Parameter rescan: examine every file again, ignoring the cache and
    ///   lifting quarantines (`plugboard list --rescan`).
    /// - Returns: one record per candidate file, in file-name order.
    /// - Throws: only when the directory itself cannot be read.
    @discardableResult
    public func discover(rescan: Bool = false) throws(PluginDirectory.ScanError) -> [PluginRecord] {
        guard let directory = configuration.pluginsDirectory else { return [] }
        return lifecycle.withIsolation(try lifecycle.discover(directory, rescan: rescan))
    }

    /// Admits and scans specific files (absolute or relative paths) like
    /// ``discover(rescan:)``, with the interface libraries of the `lib/`
    /// folder beside each: compatible ones become `available`.
    @discardableResult
    public func discover(files: [String], rescan: Bool = false) -> [PluginRecord] {
        return lifecycle.withIsolation(lifecycle.discover(files: files, rescan: rescan))
    }

    /// ``discover(rescan:)``, then activates the plugins that declared the
    /// `startup` trigger. The others activate when first needed (or all at
    /// once with ``activateAll()``).
    @discardableResult
    public func start(rescan: Bool = false) throws(PluginDirectory.ScanError) -> [PluginRecord] {
        let records = try discover(rescan: rescan)
        lifecycle.activate(pluginIDs: lifecycle.availableIDs(trigger: .startup))
        startWatching()
        return lifecycle.withIsolation(lifecycle.current(records))
    }

    /// The order ``activate(pluginIDs:)`` would activate `pluginIDs` (nil:
    /// every available plugin) and the available plugins they require: each
    /// after what it requires, otherwise in file-name order. Runs nothing.
    package func activationOrder(for pluginIDs: Set<String>? = nil) -> [String] {
        lifecycle.activationOrder(pluginIDs)
    }

    /// Activates the given plugins if they are available (others are ignored).
    public func activate(pluginIDs: Set<String>) {
        lifecycle.activate(pluginIDs: pluginIDs)
    }

    /// Activates every available plugin now (for hosts that want everything loaded up front).
    public func activateAll() {
        lifecycle.activate(pluginIDs: lifecycle.availableIDs())
    }

    /// Replaces a live plugin with a new build of it, without restarting
    /// (docs/hot-reload.md).
    ///
    /// **Verify** (admit the build like any file and load it in a scanner
    /// process; with `.loadAndActivate` also create and activate it there),
    /// **load** (create the new generation from the admitted copy with the
    /// old one's state, activate it), **switch** (publish its providers in
    /// one registry update, then deactivate the old generation). Failure never
    /// costs the working version: the old generation stays live with its
    /// state. Calls already running finish on the old generation. Plugins
    /// that require it stop before the load and start again on the new
    /// generation; if one fails, the whole cascade goes back
    /// (``ReloadOutcome/plan``, ``ReloadOutcome/dependents``). Each
    /// generation stays mapped (``ReloadOutcome/addedMemory``).
    public func reload(_ pluginID: String, from file: String, verification: ReloadVerification = .load) -> ReloadOutcome {
        lifecycle.reload(pluginID, from: file, verification: verification, beforeActing: { _ in })
    }

    /// ``reload(_:from:verification:)``, handing `beforeActing` the plan
    /// (which dependents stop, start again, or stay stopped) once the build is
    /// verified, before anything changes; the host is busy with the reload
    /// then, so it must not ask the host to reload, refresh or shut down.
    public func reload(
        _ pluginID: String, from file: String, verification: ReloadVerification = .load, beforeActing: (ReloadPlan) -> Void
    ) -> ReloadOutcome {
        lifecycle.reload(pluginID, from: file, verification: verification, beforeActing: beforeActing)
    }

    /// A dry run of ``reload(_:from:verification:)``: admits the build and
    /// verifies it in a scanner process (its code runs there only), and says
    /// what a reload would do to the plugins that require this one. Changes
    /// nothing in the host.
    public func planReload(_ pluginID: String, from file: String, verification: ReloadVerification = .load) -> ReloadPlan {
        lifecycle.planReload(pluginID, from: file, verification: verification)
    }

    /// Looks at ``Configuration/pluginsDirectory`` again while the host runs
    /// (what a file watcher, an admin call or SIGHUP triggers): new files are
    /// admitted and scanned like any (available, and started if they have the
    /// `startup` trigger); an active plugin whose file changed is reloaded
    /// (``reload(_:from:verification:)``: verified, state handed over, its
    /// dependents cascaded; a failure leaves the running generation
    /// serving); one whose file is gone is retired: out of the registry, then
    /// deactivated (calls already running finish on it), and the plugins that
    /// require it stop (`dependency-missing`). Install files by renaming them
    /// into place (`plugboard install`): a file written in place may be
    /// examined half-written.
    public func refresh() throws(PluginDirectory.ScanError) -> RefreshOutcome {
        try refreshing.withLock { _ throws(PluginDirectory.ScanError) in try refreshOnce() }
    }

    private func refreshOnce() throws(PluginDirectory.ScanError) -> RefreshOutcome {
        guard let directory = configuration.pluginsDirectory else { return try lifecycle.refresh(discovering: { [] }) }
        return try lifecycle.refresh { () throws(PluginDirectory.ScanError) in try lifecycle.discover(directory, rescan: false) }
    }

    /// Deactivates every plugin in reverse activation order and empties the
    /// registry. Images stay mapped (they can never be unloaded). Clears this
    /// host's crash-journal note and removes its private copies. After it,
    /// the host discovers and activates nothing.
    public func shutdown() {
        watching.stop()
        lifecycle.shutdown()
        ended.fire()
    }

    /// Starts the plugins-directory watcher when the configuration asks for it.
    private func startWatching() {
        guard configuration.watching.pluginsDirectory, let directory = configuration.pluginsDirectory else { return }
        watching.start(directory: directory, libraries: configuration.watching.interfaceLibraries, report: services.report) { [weak self] () throws(PluginDirectory.ScanError) in
            try self?.refresh()
        }
    }

    // MARK: - Calls and interruptions

    /// Runs `body`, a call into plugin `pluginID`'s code, with a crash-journal
    /// note: if the process dies inside, the next start quarantines the
    /// plugin (phase `call`). For calls a crash of which must not repeat on
    /// every start, such as a command the user runs; not for hot paths.
    public func journaled<Result, Failure: Error>(call pluginID: String, _ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        try lifecycle.journaled(call: pluginID, body)
    }

    /// Tells the host that the process is being stopped by `signal` (for a
    /// host that handles SIGINT and SIGTERM itself, instead of
    /// ``Configuration/CrashJournalSettings/handlesInterruptSignals``): a plugin's init or
    /// activate running past ``Configuration/CrashJournalSettings/hangThreshold`` keeps its
    /// journal note, marked as a hang, so the next start quarantines it;
    /// shorter ones, and journaled calls (a command may run long on purpose),
    /// are cleared. Call it, then exit (``shutdown()`` when nothing hangs).
    public func interrupted(signal: Int32) {
        lifecycle.journal.interrupted(signal: signal)
    }

    // MARK: - Reading state

    /// What the host knows about every candidate file so far.
    public var records: [PluginRecord] { lifecycle.withIsolation(lifecycle.records) }

    /// A status snapshot per plugin file: what runs, from which bytes, since
    /// when, in which generation and where, with counts for isolated
    /// plugins and why the others are not running. Cheap: no plugin code
    /// runs and no file is read.
    public func snapshot() -> [PluginSnapshot] { lifecycle.snapshot() }

    /// The signature the lock file in force was accepted with, when
    /// signatures are required or preferred and it holds (docs/operations.md).
    public var signedLock: SignedLock? { catalog.admission.lock?.signedLock }

    /// Why this host ran code it could not verify (empty: it did not). Set
    /// once, kept for the life of the process; stamped on crash-journal notes
    /// and quarantines made while set (``Quarantine/taint``).
    public var taint: [TaintEntry] { taintState.all }

    /// Ids of active plugins, in activation order.
    public var activePluginIDs: [String] { lifecycle.activePluginIDs }

    /// Problems noticed outside loading: cache, configuration, events, routes
    /// (the latest ``Configuration/Observability/diagnosticsLimit``). Storage errors are
    /// thrown to the plugin that hit them.
    public var diagnostics: [HostDiagnostic] { services.allDiagnostics }

    /// What the last discovery did (how many files the cache answered for,
    /// how many were opened and scanned).
    public var lastDiscovery: DiscoveryStatistics { catalog.lastDiscovery }

    /// Where the registry cache and crash journal are kept.
    public var cacheDirectory: String { catalog.cache.directory }

}
