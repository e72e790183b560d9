import Synchronization
import PlugboardCore
import PlugboardAdmission
import PlugboardRegistry
import PlugboardServices
import PlugboardLoading

/// What the host knows about plugin files, and the only part that reads
/// them: discovery, the registry cache, admission (``Admission``) and the
/// scanner processes. It never runs plugin code in the host process and
/// never calls the lifecycle: it turns candidate files into facts (records,
/// and ``AvailablePlugin``s for the compatible ones) that the lifecycle,
/// which owns each plugin's state, records in its ``PluginTable``.
package final class Catalog: Sendable {
    package struct Settings: Sendable {
        var trust: DirectoryTrust
        var scanner: ScannerSettings
        /// Plugin ids kept out, with where that was decided.
        var disabled: [String: String]

        package init(trust: DirectoryTrust, scanner: ScannerSettings, disabled: [String: String]) {
            self.trust = trust
            self.scanner = scanner
            self.disabled = disabled
        }
    }

    package let admission: Admission
    package let cache: RegistryCache
    /// Quarantines decided while running plugins, for every host of the state directory.
    let quarantines: SharedQuarantines
    /// Read for the notes of hosts that died (the lifecycle writes them).
    let journal: CrashJournal
    let settings: Settings
    /// Read only: the declared points new plugins are checked against.
    let registry: ExtensionRegistry
    let services: HostServices

    /// What the catalog learned about files, beyond any one plugin's state.
    package struct Facts {
        /// Whether the journal's dead notes were read (once per host).
        var recovered = false
        /// Plugins whose init or activate the last start was stopped in
        /// (before the hang threshold), by path: the count goes into this
        /// start's notes for them.
        var interruptedStarts: [String: (identity: FileIdentity, count: Int)] = [:]
        package var lastDiscovery = DiscoveryStatistics()
        /// Every interface library admitted or refused so far.
        var interfaceLibraries: [InterfaceLibrary] = []
        /// The last host died while several plugins started side by side,
        /// and nothing named one: this host starts plugins one at a time,
        /// so that a crash again names its plugin.
        package var startsOneAtATime = false
    }

    package let facts = Mutex(Facts())
    /// One discovery at a time (each sees the records the previous one
    /// left), and the cache's other writes between discoveries.
    package let discovering = Mutex(())

    package init(
        admission: Admission, cache: RegistryCache, quarantines: SharedQuarantines, journal: CrashJournal, settings: Settings,
        registry: ExtensionRegistry, services: HostServices
    ) {
        self.admission = admission
        self.cache = cache
        self.quarantines = quarantines
        self.journal = journal
        self.settings = settings
        self.registry = registry
        self.services = services
    }

    package var lastDiscovery: DiscoveryStatistics { facts.withLock { $0.lastDiscovery } }
    package var interfaceLibraries: [InterfaceLibrary] { facts.withLock { $0.interfaceLibraries } }

    /// How many starts in a row were stopped during the init or activate of
    /// the file at `path` (still `identity`), if any.
    package func interruptedStarts(of path: String, identity: FileIdentity?) -> Int? {
        facts.withLock { facts in
            facts.interruptedStarts[path].flatMap { $0.identity == identity ? $0.count : nil }
        }
    }

    /// Warns about plugins the settings file configures that `directory` does not hold.
    package func reportUnknownConfiguredPlugins(known records: [PluginRecord], in directory: String) {
        let known = Set(records.compactMap(\.id))
        for id in services.configuration.plugins.keys.sorted() where !known.contains(id) {
            services.report(HostDiagnostic(.warning, code: "config-unknown-plugin",
                message: "configures plugin \(id), which is not in \(directory); ignored",
                file: services.configuration.file, keyPath: "plugins.\(id)"))
        }
    }

    // MARK: - The cache between discoveries

    /// A running isolated plugin went over its restart budget: its cache
    /// entry says quarantined, so the next start keeps it out until the file
    /// changes or a rescan.
    package func quarantineInCache(path: String, identity: FileIdentity?, _ quarantine: Quarantine) {
        guard let identity = identity ?? FileIdentity.of(path: path) else { return }
        discovering.withLock { _ in
            var (entries, _) = cache.load()
            let entry = CacheEntry.quarantining(entries[path], identity: identity, quarantine)
            entries[path] = entry
            if let problem = cache.save(entries) { services.report(problem) }
            if let problem = quarantines.update({ $0[path] = .init(path: path, identity: identity, quarantine: quarantine, plugin: entry.plugin) }) {
                services.report(problem)
            }
        }
    }

    /// Drops what the cache says about `path`, so the next start examines it.
    /// (Between discoveries: one running now would write the entry back.)
    package func forgetCacheEntry(_ path: String) {
        discovering.withLock { _ in
            var (entries, _) = cache.load()
            guard entries[path] != nil else { return }
            entries[path] = nil
            if let problem = cache.save(entries) { services.report(problem) }
        }
    }
}
