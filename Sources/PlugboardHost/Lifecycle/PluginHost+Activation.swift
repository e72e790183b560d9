@_spi(PlugboardHost) import Plugboard

extension PluginHost {
    /// Activates the available plugins among `pluginIDs`, in file-name order,
    /// and publishes their providers in one registry update. Each load,
    /// init and activate runs with a crash-journal note.
    func activateLocked(_ pluginIDs: Set<String>) {
        let pending = state.withLock { state in
            pluginIDs.compactMap { state.available.removeValue(forKey: $0) }.sorted { $0.path < $1.path }
        }
        guard !pending.isEmpty else { return }
        services.triggers.remove(Set(pending.map(\.plugin.id)))
        var started: [LivePlugin] = []
        ExtensionRegistry.$isActivating.withValue(true) {
            for plugin in pending {
                let result = start(plugin)
                state.withLock { state in
                    guard let index = state.records.lastIndex(where: { $0.path == plugin.path && $0.status == .available }) else { return }
                    switch result {
                    case .success:
                        state.records[index].status = .active
                        state.records[index].generation = 1
                    case let .failure(error):
                        state.records[index].fail(error)
                    }
                }
                switch result {
                case var .success(live):
                    live.identity = plugin.identity
                    started.append(live)
                case .failure: services.retire(plugin.plugin.id)
                }
            }
        }
        state.withLock { $0.live.append(contentsOf: started) }
        registry.replaceProviders(of: Set(started.map(\.id)), with: started.flatMap(\.providers), pending: pendingInterfaces())
    }

    /// Drops what the cache says about `path`, so the next start examines it.
    private func forgetCacheEntry(_ path: String) {
        var (entries, _) = cache.load()
        guard entries.removeValue(forKey: path) != nil else { return }
        if let problem = cache.save(entries) { services.report(problem) }
    }

    /// Loads the admitted bytes of one available plugin, creates and activates it.
    private func start(_ plugin: AvailablePlugin) -> Result<LivePlugin, PluginLoadError> {
        let path = plugin.path
        let image: LoadableImage
        if let admitted = plugin.image {
            image = admitted
        } else {
            // Known from the cache, which is only a hint: the bytes are
            // admitted now, every check included, and must be the ones scanned.
            var ownership = OwnershipCheck()
            let checked: CheckedImage
            switch admission.admit(PluginDirectory.candidate(at: path), ownership: &ownership) {
            case let .success(admitted): checked = admitted
            case let .failure(refusal):
                if refusal.read != nil { forgetCacheEntry(path) }
                return .failure(refusal.error)
            }
            switch admission.join(checked, with: plugin.plugin, scannedHash: plugin.hash) {
            case let .success(joined): image = joined
            case let .failure(error):
                forgetCacheEntry(path)
                return .failure(error)
            }
        }
        let date = Quarantine.now()
        let note = { (phase: Quarantine.Phase) in
            CrashJournal.Note(pluginID: plugin.plugin.id, path: path, identity: plugin.identity, phase: phase, date: date)
        }
        let loaded: LoadedImage
        switch journal.record(note(.`init`), { PluginLoader.load(image, environment: environment) }) {
        case let .success(success): loaded = success
        case let .failure(error): return .failure(error)
        }
        let defaults = journal.record(note(.`init`)) { loaded.factory.defaultConfiguration }
        return Activation.start(
            loaded, path: path, generation: 1,
            context: services.context(for: loaded.descriptor, defaults: defaults),
            registry: registry, journal: journal, note: note)
    }
}
