@_spi(PlugboardHost) import Plugboard
import Synchronization

/// Runs plugin code in the host: activation (lazy, once per plugin), reload
/// (generations, state handover, rollback), shutdown, and the crash journal
/// around each. Takes plugins from the ``Catalog`` and loads only what
/// ``Admission`` admitted (``LoadableImage``); publishes providers to the
/// ``ExtensionRegistry``.
final class Lifecycle: PluginActivating {
    let catalog: Catalog
    let registry: ExtensionRegistry
    let services: HostServices
    let journal: CrashJournal
    let environment: HostEnvironment
    let configuration: PluginHost.Configuration
    var scanner: ScannerSettings { configuration.scanner }
    /// A scanner process kept ready for the next reload's verification.
    let spareScanner = ScannerSpare()

    /// In activation order.
    let live = Mutex<[LivePlugin]>([])
    /// Serialises activation, reloads and shutdown: each sees the live set
    /// the previous one left. (Plugin code runs under it: a plugin must not
    /// call back into its host's lifecycle.) Holds whether the host was shut
    /// down: nothing activates after that.
    let serial = Mutex(false)

    init(
        catalog: Catalog, registry: ExtensionRegistry, services: HostServices, journal: CrashJournal,
        environment: HostEnvironment, configuration: PluginHost.Configuration
    ) {
        self.catalog = catalog
        self.registry = registry
        self.services = services
        self.journal = journal
        self.environment = environment
        self.configuration = configuration
    }

    var admission: Admission { catalog.admission }

    var activePluginIDs: [String] { live.withLock { $0.map(\.id) } }

    // MARK: - PluginActivating

    func activate(pluginIDs: Set<String>) {
        guard !pluginIDs.isEmpty, !ExtensionRegistry.isActivating else { return }
        serial.withLock { shutDown in if !shutDown { activateSerially(pluginIDs) } }
    }

    func activateProviders(of interfaceID: String) {
        guard !ExtensionRegistry.isActivating else { return }
        // Under the lock: publishes the providers and what is still pending, in one update.
        serial.withLock { shutDown in if !shutDown { activateSerially(catalog.availableIDs(providing: interfaceID)) } }
    }

    // MARK: - Calls and shutdown

    /// Runs `body`, a call into plugin `pluginID`'s code, with a crash-journal note.
    func journaled<Result, Failure: Error>(call pluginID: String, _ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        // An isolated plugin's code runs in its child: a crash there costs a
        // call, not this process, so there is nothing to journal.
        guard let running = live.withLock({ $0.first { $0.id == pluginID } }), running.isolated == nil else { return try body() }
        // The identity of the file the running code came from, not of
        // whatever is installed now: a fixed build must not be blamed.
        let note = CrashJournal.Note(
            pluginID: pluginID, path: running.path, identity: running.identity, phase: .call, date: Quarantine.now())
        return try journal.record(note, body)
    }

    /// Deactivates every plugin in reverse activation order and empties the
    /// registry. Images stay mapped (they can never be unloaded).
    func shutdown() {
        serial.withLock { shutDown in
            shutDown = true
            let running = live.withLock { live in
                defer { live.removeAll() }
                return live
            }
            catalog.clear()
            registry.replaceProviders(of: Set(running.map(\.id)), with: [], pending: [])
            // Plugin code under the lifecycle lock must not activate anything.
            ExtensionRegistry.$isActivating.withValue(true) {
                for plugin in running.reversed() {
                    plugin.stop()
                    services.retire(plugin.id, generation: plugin.generation)
                }
            }
            journal.close()
            spareScanner.discard()
            admission.copies.remove()
        }
    }
}
