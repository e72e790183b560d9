import Synchronization

/// What the host knows about plugin files, and the only part that reads
/// them: discovery, the registry cache, admission (``Admission``) and the
/// scanner processes. It never runs plugin code in the host process: it
/// hands compatible plugins, as ``AvailablePlugin``s, to the lifecycle.
final class Catalog: Sendable {
    struct Settings: Sendable {
        var trust: DirectoryTrust
        var scanner: ScannerSettings
        /// Plugin ids kept out, with where that was decided.
        var disabled: [String: String]
    }

    let admission: Admission
    let cache: RegistryCache
    /// Read for the notes of hosts that died (the lifecycle writes them).
    let journal: CrashJournal
    let settings: Settings
    let registry: ExtensionRegistry
    let services: HostServices

    struct State {
        var records: [PluginRecord] = []
        /// Compatible, admitted, not active yet; by plugin id.
        var available: [String: AvailablePlugin] = [:]
        /// Plugins handed to the lifecycle (active, or being activated), by
        /// id, with their file: they win over any new file with their id.
        var claimed: [String: String] = [:]
        /// Whether the journal's dead notes were read (once per host).
        var recovered = false
        /// Plugins whose init or activate the last start was stopped in
        /// (before the hang threshold), by path: the count goes into this
        /// start's notes for them.
        var interruptedStarts: [String: (identity: FileIdentity, count: Int)] = [:]
        var lastDiscovery = DiscoveryStatistics()
        /// Every interface library admitted or refused so far.
        var interfaceLibraries: [InterfaceLibrary] = []
        /// The host shut down: nothing is discovered any more.
        var closed = false
    }

    let state = Mutex(State())
    /// One discovery at a time: each sees the records the previous one left.
    let discovering = Mutex(())

    init(
        admission: Admission, cache: RegistryCache, journal: CrashJournal, settings: Settings,
        registry: ExtensionRegistry, services: HostServices
    ) {
        self.admission = admission
        self.cache = cache
        self.journal = journal
        self.settings = settings
        self.registry = registry
        self.services = services
    }

    // MARK: - Discovering

    /// Every candidate of `directory` (and its `lib/` interface libraries)
    /// admitted and scanned, or answered by the cache.
    func discover(_ directory: String, rescan: Bool) throws(PluginDirectory.ScanError) -> [PluginRecord] {
        let candidates = try PluginDirectory.scan(directory)
        guard let records = discover(candidates, libraryFolders: [directory], rescan: rescan) else { return [] }
        let known = Set(records.compactMap(\.id))
        for id in services.configuration.plugins.keys.sorted() where !known.contains(id) {
            services.report(HostDiagnostic(.warning, code: "config-unknown-plugin",
                message: "configures plugin \(id), which is not in \(directory); ignored",
                file: services.configuration.file, keyPath: "plugins.\(id)"))
        }
        return records
    }

    /// `files` (absolute or relative paths) as discovery would take them,
    /// with the interface libraries of the `lib/` folder beside each.
    func discover(files: [String], rescan: Bool) -> [PluginRecord] {
        let candidates = PluginDirectory.candidates(at: files)
        return discover(candidates, libraryFolders: Set(candidates.map { OwnershipCheck.parent(of: $0.path) }).sorted(), rescan: rescan) ?? []
    }

    /// The one discovery both take: the `lib/` interface libraries of
    /// `libraryFolders` installed, then `candidates` examined and settled.
    /// nil after shutdown: nothing is discovered then.
    private func discover(_ candidates: [PluginCandidate], libraryFolders: [String], rescan: Bool) -> [PluginRecord]? {
        discovering.withLock { _ -> [PluginRecord]? in
            if state.withLock(\.closed) { return nil }
            let libraries = libraryFolders.flatMap(installInterfaceLibraries(from:))
            let records = settle(examine(candidates, rescan: rescan))
            state.withLock { $0.lastDiscovery.interfaceLibraries = libraries.filter { $0.error == nil }.map(\.path) }
            return records
        }
    }

    // MARK: - Reading

    var records: [PluginRecord] { state.withLock { $0.records } }
    var lastDiscovery: DiscoveryStatistics { state.withLock { $0.lastDiscovery } }
    var interfaceLibraries: [InterfaceLibrary] { state.withLock { $0.interfaceLibraries } }

    /// The latest record of each of `records`' files.
    func current(_ records: [PluginRecord]) -> [PluginRecord] {
        let latest = state.withLock { state in
            Dictionary(state.records.map { ($0.path, $0) }, uniquingKeysWith: { _, last in last })
        }
        return records.map { latest[$0.path] ?? $0 }
    }

    /// Ids of the available plugins that declared `trigger` (`startup`), or all of them.
    func availableIDs(trigger: String? = nil) -> Set<String> {
        state.withLock { state in
            Set(state.available.values.filter { trigger == nil || $0.plugin.activation.contains(trigger!) }.map(\.plugin.id))
        }
    }

    /// Ids of the available plugins providing `interfaceID`.
    func availableIDs(providing interfaceID: String) -> Set<String> {
        state.withLock { state in
            Set(state.available.values.filter { $0.plugin.provides.contains { $0.interface == interfaceID } }.map(\.plugin.id))
        }
    }

    /// The interfaces available plugins provide.
    func pendingInterfaces() -> Set<String> {
        state.withLock { state in
            var interfaces = Set<String>(), last = ""
            for plugin in state.available.values {
                // Most plugins provide the same few interfaces: a repeat is compared, not hashed.
                for provided in plugin.plugin.provides where provided.interface != last {
                    interfaces.insert(provided.interface)
                    last = provided.interface
                }
            }
            return interfaces
        }
    }

    // MARK: - Handing over to the lifecycle

    /// Takes the available plugins among `pluginIDs` for activation, in
    /// file-name order: no longer available, claimed by their id.
    func take(_ pluginIDs: Set<String>) -> [AvailablePlugin] {
        let taken = state.withLock { state in
            let taken = pluginIDs.compactMap { state.available.removeValue(forKey: $0) }.sorted { $0.path < $1.path }
            for plugin in taken { state.claimed[plugin.plugin.id] = plugin.path }
            return taken
        }
        services.triggers.remove(Set(taken.map(\.plugin.id)))
        return taken
    }

    /// What activating a taken plugin came to: active at generation 1, or
    /// failed with `error` (its id is free again).
    /// How many starts in a row were stopped during the init or activate of
    /// the file at `path` (still `identity`), if any.
    func interruptedStarts(of path: String, identity: FileIdentity?) -> Int? {
        state.withLock { state in
            state.interruptedStarts[path].flatMap { $0.identity == identity ? $0.count : nil }
        }
    }

    func finishActivation(of plugin: AvailablePlugin, _ result: Result<Void, PluginLoadError>) {
        state.withLock { state in
            if case .failure = result { state.claimed[plugin.plugin.id] = nil }
            guard let index = state.records.lastIndex(where: { $0.path == plugin.path && $0.status == .available }) else { return }
            switch result {
            case .success:
                state.records[index].status = .active
                state.records[index].generation = 1
            case let .failure(error):
                state.records[index].fail(error)
            }
        }
    }

    /// A reload replaced plugin `id`'s active record with `record`.
    func replaceActiveRecord(of id: String, with record: PluginRecord) {
        state.withLock { state in
            guard let index = state.records.lastIndex(where: { $0.id == id && $0.status == .active }) else { return }
            state.records[index] = record
            state.claimed[id] = record.path
        }
    }

    /// Forgets the records of files whose plugins were retired (the files
    /// are gone); their ids are free again.
    func forgetRecords(of paths: Set<String>) {
        state.withLock { state in
            state.records.removeAll { paths.contains($0.path) }
            for (id, path) in state.claimed where paths.contains(path) { state.claimed[id] = nil }
        }
    }

    /// For a refresh: available plugins whose file changed or is gone are
    /// forgotten (the next discovery examines a changed file again), and so
    /// are the records of refused files that are gone. Their ids.
    func forgetChangedFiles() -> [String] {
        state.withLock { state in
            var forgotten: [String] = []
            for (id, plugin) in state.available where FileIdentity.of(path: plugin.path) != plugin.identity {
                state.available[id] = nil
                state.records.removeAll { $0.path == plugin.path }
                forgotten.append(id)
            }
            state.records.removeAll { record in
                record.status != .active && record.status != .available && FileIdentity.of(path: record.path) == nil
            }
            return forgotten.sorted()
        }
    }

    /// A dependent restarted by a reload cascade runs as `generation`.
    func setGeneration(of id: String, _ generation: Int) {
        state.withLock { state in
            guard let index = state.records.lastIndex(where: { $0.id == id && $0.status == .active }) else { return }
            state.records[index].generation = generation
        }
    }

    /// An active plugin stopped for good while the host runs (a plugin it
    /// requires went away): its record says why, and its id is free again.
    func stopActive(_ id: String, _ error: PluginLoadError) {
        state.withLock { state in
            state.claimed[id] = nil
            guard let index = state.records.lastIndex(where: { $0.id == id && $0.status == .active }) else { return }
            state.records[index].fail(error)
        }
    }

    /// An active isolated plugin went over its restart budget: its record
    /// and its cache entry say quarantined (the next start keeps it out until
    /// the file changes or a rescan), and its id is free again.
    func quarantineActive(_ id: String, path: String, identity: FileIdentity?, _ quarantine: Quarantine) {
        state.withLock { state in
            state.claimed[id] = nil
            guard let index = state.records.lastIndex(where: { $0.id == id && $0.status == .active }) else { return }
            state.records[index].fail(.quarantined(path: path, quarantine: quarantine))
        }
        guard let identity = identity ?? FileIdentity.of(path: path) else { return }
        discovering.withLock { _ in
            var (entries, _) = cache.load()
            entries[path] = CacheEntry.quarantining(entries[path], identity: identity, quarantine)
            if let problem = cache.save(entries) { services.report(problem) }
        }
    }

    /// Forgets every available and claimed plugin; discovers nothing more
    /// (the host shut down).
    func clear() {
        discovering.withLock { _ in
            state.withLock { state in
                state.available.removeAll()
                state.claimed.removeAll()
                state.closed = true
            }
        }
        services.triggers.removeAll()
    }

    /// Drops what the cache says about `path`, so the next start examines it.
    /// (Between discoveries: one running now would write the entry back.)
    func forgetCacheEntry(_ path: String) {
        discovering.withLock { _ in
            var (entries, _) = cache.load()
            guard entries[path] != nil else { return }
            entries[path] = nil
            if let problem = cache.save(entries) { services.report(problem) }
        }
    }
}
