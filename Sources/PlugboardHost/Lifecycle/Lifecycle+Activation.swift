@_spi(PlugboardHost) import Plugboard

extension Lifecycle {
    /// Activates the available plugins among `pluginIDs`, and the available
    /// plugins they require, each after what it requires (ties by id), and
    /// publishes their providers in one registry update. Each load, init and
    /// activate runs with a crash-journal note. Under ``serial``.
    func activateSerially(_ pluginIDs: Set<String>) {
        let order = catalog.activationOrder(pluginIDs)
        let position = Dictionary(uniqueKeysWithValues: order.enumerated().map { ($1, $0) })
        let pending = catalog.take(Set(order)).sorted { position[$0.plugin.id, default: 0] < position[$1.plugin.id, default: 0] }
        guard !pending.isEmpty else { return }
        var started: [LivePlugin] = []
        var running = Set(activePluginIDs)
        // One check for the batch, as for a discovery: each folder walked once.
        var ownership = OwnershipCheck()
        ExtensionRegistry.$isActivating.withValue(true) {
            for plugin in pending {
                let result = requirementsRunning(plugin, running).flatMap { start(plugin, ownership: &ownership, running: running) }
                if case let .success(live) = result { running.insert(live.id) }
                catalog.finishActivation(of: plugin, result.map { _ in () })
                switch result {
                case var .success(live):
                    live.identity = plugin.identity
                    started.append(live)
                case .failure: services.retire(plugin.plugin.id)
                }
            }
        }
        live.withLock { $0.append(contentsOf: started) }
        registry.replaceProviders(of: Set(started.map(\.id)), with: started.flatMap(\.providers), pending: catalog.pendingInterfaces())
    }

    /// A plugin whose required dependency did not start (its init threw,
    /// say) does not start either.
    private func requirementsRunning(_ plugin: AvailablePlugin, _ running: Set<String>) -> Result<Void, PluginLoadError> {
        for requirement in plugin.plugin.dependencies where !requirement.optional && !running.contains(requirement.id) {
            return .failure(.dependency(.dependencyRejected, path: plugin.path, id: plugin.plugin.id,
                reason: "requires plugin \(requirement.id), which did not start; fix \(requirement.id) first"))
        }
        return .success(())
    }

    /// Loads the admitted bytes of one available plugin, creates and activates it.
    private func start(_ plugin: AvailablePlugin, ownership: inout OwnershipCheck, running: Set<String>) -> Result<LivePlugin, PluginLoadError> {
        let path = plugin.path
        let image: LoadableImage
        if let admitted = plugin.image {
            // Admitted at discovery: the lock file must still vouch for it now.
            if let problem = admission.stillVouched(admitted) { return .failure(problem) }
            image = admitted
        } else {
            // Known from the cache, which is only a hint: the bytes are
            // admitted now, every check included, and must be the ones scanned.
            let checked: CheckedImage
            switch admission.admit(PluginDirectory.candidate(at: path), ownership: &ownership) {
            case let .success(admitted): checked = admitted
            case let .failure(refusal):
                if refusal.read != nil { catalog.forgetCacheEntry(path) }
                return .failure(refusal.error)
            }
            switch admission.join(checked, with: plugin.plugin, from: .remembered(hash: plugin.hash)) {
            case let .success(joined): image = joined
            case let .failure(error):
                catalog.forgetCacheEntry(path)
                return .failure(error)
            }
        }
        let hash = ContentHash.text(image.checked.hash)
        if let isolation = isolation(of: plugin.plugin.id) {
            return startIsolated(image, isolation: isolation, generation: 1, activePlugins: running).map { started in
                var live = started.live
                live.contentHash = hash
                return live
            }
        }
        let date = Quarantine.now()
        let interruptedStarts = catalog.interruptedStarts(of: path, identity: plugin.identity)
        let note = { (phase: Quarantine.Phase) in
            CrashJournal.Note(
                pluginID: plugin.plugin.id, path: path, identity: plugin.identity, phase: phase, date: date,
                interruptedStarts: interruptedStarts)
        }
        let loaded: LoadedImage
        switch journal.record(note(.`init`), {
            PluginLoader.load(image, environment: environment) { journal.registerImage($0, note: note(.thread)) }
        }) {
        case let .success(success): loaded = success
        case let .failure(error): return .failure(error)
        }
        let defaults = journal.record(note(.`init`)) { loaded.factory.defaultConfiguration }
        return Activation.start(
            loaded, path: path, generation: 1,
            context: services.context(for: loaded.descriptor, defaults: defaults, activePlugins: running),
            registry: registry, journal: journal, note: note
        ).map { started in
            var live = started
            live.contentHash = hash
            return live
        }
    }
}
