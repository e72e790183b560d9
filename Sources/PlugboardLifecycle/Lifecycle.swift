@_spi(PlugboardHost) import Plugboard
import Synchronization
import PlugboardCore
import PlugboardAdmission
import PlugboardRegistry
import PlugboardServices
import PlugboardLoading
import PlugboardCatalog
import PlugboardIsolation

/// The owner of every plugin's life: the one ``PluginTable`` of plugins and
/// their states, and every change to it. Discovery (through the
/// ``Catalog``, which only reports facts about files), activation (lazy,
/// once per plugin), reload (generations, state handover, rollback),
/// cascades, live refresh, isolation's quarantines and shutdown all go
/// through it. It loads only what ``Admission`` admitted
/// (``LoadableImage``), keeps the crash journal around plugin code, and is
/// the only writer of the views others read: the ``ExtensionRegistry``'s
/// snapshots and the pending ``ActivationTriggers``.
package final class Lifecycle: PluginActivating {
    let catalog: Catalog
    let registry: ExtensionRegistry
    let services: HostServices
    package let journal: CrashJournal
    let environment: HostEnvironment
    let configuration: LifecycleSettings
    /// Why this host ran code it could not verify.
    let taint: HostTaint
    /// The ids of ``PluginHost/Configuration/Trust/ownKeyFiles``' keys, read once.
    let ownKeyIDs: Set<String>
    package var scanner: ScannerSettings { configuration.scanner }
    /// A scanner process kept ready for the next reload's verification.
    package let spareScanner = ScannerSpare()
    /// How declared points cross to isolated plugins (the registry knows nothing of it).
    let isolatedPoints = IsolatedPoints()
    /// One declaration at a time, in both the registry and ``isolatedPoints``.
    private let declaring = Mutex(())

    /// Every plugin's state. Held only to read or change it, and to publish
    /// the views that follow it (registry snapshots, triggers) in the same
    /// order: no plugin code, file read or process start runs under it.
    let table = Mutex(PluginTable())
    /// Reloads, retirements, cascades and shutdown, one at a time. Starts
    /// and lookups never take it: each start holds its plugin's line.
    let changes = ChangeLine()
    /// Used only after a crash the journal could not attribute (``StartTurns``).
    let startTurns = StartTurns()
    /// Whether the children's missing resource bounds were reported (once a host).
    let boundsGapReported = Atomic<Bool>(false)

    package init(
        catalog: Catalog, registry: ExtensionRegistry, services: HostServices, journal: CrashJournal,
        environment: HostEnvironment, configuration: LifecycleSettings, taint: HostTaint
    ) {
        self.taint = taint
        self.catalog = catalog
        self.registry = registry
        self.services = services
        self.journal = journal
        self.environment = environment
        self.configuration = configuration
        ownKeyIDs = Set(configuration.ownKeyFiles.flatMap { file -> [String] in
            guard case let .success(keys) = SignatureCheck.keys(in: file, checksOwnership: configuration.checksOwnership) else {
                services.report(HostDiagnostic(.warning, code: "own-key-unreadable",
                    message: "\(file): the host's own key file cannot be read; no plugin counts as signed by the host (Trust.ownKeyFiles)"))
                return []
            }
            return keys.map(\.idText)
        })
    }

    var admission: Admission { catalog.admission }

    // MARK: - Reading the table

    package var records: [PluginRecord] { table.withLock { $0.records } }
    package var activePluginIDs: [String] { table.withLock { $0.live.map(\.id) } }
    var livePlugins: [LivePlugin] { table.withLock { $0.live } }
    package func livePlugin(_ id: String) -> LivePlugin? { table.withLock { $0.livePlugin(id) } }
    package func current(_ records: [PluginRecord]) -> [PluginRecord] { table.withLock { $0.current(records) } }
    package func availableIDs(trigger: PluginTrigger? = nil) -> Set<String> { table.withLock { $0.availableIDs(trigger: trigger) } }
    package func activationOrder(_ pluginIDs: Set<String>?) -> [String] {
        table.withLock { $0.activationOrder(pluginIDs ?? $0.availableIDs()) }
    }

    // MARK: - Requests (PluginActivating)

    // A request made through the context of a plugin being started never
    // reaches here (``StartingPlugins``): it gets what is active.

    package func activate(pluginIDs: Set<String>) {
        guard !pluginIDs.isEmpty else { return }
        startInOrder(pluginIDs)
    }

    package func activateProviders(of interfaceID: String) {
        // The available ones, and those another thread is starting (waited for).
        let ids = table.withLock { $0.availableIDs(providing: interfaceID).union($0.startingIDs(providing: interfaceID)) }
        guard !ids.isEmpty else { return }
        startInOrder(ids, lookingUp: interfaceID)
    }

    /// Declares an extension point: in the registry, and for isolated
    /// plugins, as one step (two declarations of one point never interleave).
    package func declare<Point: ExtensionPoint>(_ point: Point.Type, isolatedCalls: IsolatedCallPolicy) {
        declaring.withLock { _ in
            isolatedPoints.declare(point, calls: isolatedCalls)
            registry.declare(DeclaredExtensionPoint(point))
        }
    }

    // MARK: - Publishing views

    /// Publishes newly available plugins: their triggers, and the interfaces
    /// now pending in the registry. After they are in the table, so a
    /// trigger that fires now finds them.
    /// Called under the table's lock, so that the triggers and the pending
    /// interfaces always follow the table's order of changes.
    func publishAvailable(_ admitted: [AvailablePlugin], in table: PluginTable) {
        for plugin in admitted { services.triggers.add(plugin.triggers, for: plugin.plugin.id) }
        registry.replaceProviders(of: [], with: [], pending: table.pendingInterfaces)
    }

    // MARK: - Calls and shutdown

    /// Runs `body`, a call into plugin `pluginID`'s code, with a crash-journal note.
    package func journaled<Result, Failure: Error>(call pluginID: String, _ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        // An isolated plugin's code runs in its child: a crash there costs a
        // call, not this process, so there is nothing to journal.
        guard let running = livePlugin(pluginID), running.isolated == nil else { return try body() }
        // The identity of the file the running code came from, not of
        // whatever is installed now: a fixed build must not be blamed.
        let note = CrashJournal.Note(
            pluginID: pluginID, path: running.path, identity: running.identity, phase: .call, date: Quarantine.now())
        return try journal.record(note, body)
    }

    /// Deactivates every plugin in reverse activation order and empties the
    /// registry. Images stay mapped (they can never be unloaded).
    package func shutdown() {
        changes.run { shutDown in
            shutDown = true
            // No start begins from here; those under way end first.
            let starting = table.withLock { table in
                table.closing = true
                return Array(table.lines.values)
            }
            for line in starting { line.wait() }
            // After any discovery under way: nothing is discovered any more.
            let running = catalog.discovering.withLock { _ in
                table.withLock { table in
                    let running = table.close()
                    services.triggers.removeAll()
                    registry.replaceProviders(of: Set(running.map(\.id)), with: [], pending: [])
                    return running
                }
            }
            for plugin in running.reversed() {
                plugin.stop()
                services.retire(plugin.id, generation: plugin.generation)
            }
            journal.close()
            spareScanner.discard()
            admission.copies.remove()
        }
    }
}
