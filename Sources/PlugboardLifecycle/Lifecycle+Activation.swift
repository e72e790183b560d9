@_spi(PlugboardHost) import Plugboard
import PlugboardCore
import PlugboardAdmission
import PlugboardCatalog

extension Lifecycle {
    /// Activates the available plugins among `pluginIDs`, and the available
    /// plugins they require, each after what it requires (ties by id), and
    /// publishes their providers in one registry update. Each load, init and
    /// activate runs with a crash-journal note. Inside the ``work``.
    func activateSerially(_ pluginIDs: Set<String>) {
        let (pending, alreadyRunning) = table.withLock { table -> ([AvailablePlugin], [String]) in
            let order = table.activationOrder(pluginIDs)
            let position = Dictionary(uniqueKeysWithValues: order.enumerated().map { ($1, $0) })
            let taken = table.take(Set(order)).sorted { position[$0.plugin.id, default: 0] < position[$1.plugin.id, default: 0] }
            // Taken: no longer available, so their triggers go, with the take.
            services.triggers.remove(Set(taken.map(\.plugin.id)))
            return (taken, table.live.map(\.id))
        }
        guard !pending.isEmpty else { return }
        var started: [LivePlugin] = []
        var running = Set(alreadyRunning)
        // One check for the batch, as for a discovery: each folder walked once.
        var ownership = OwnershipCheck()
        for plugin in pending {
            let result = requirementsRunning(plugin, running).flatMap { start(plugin, ownership: &ownership, running: running) }
            switch result {
            case var .success(live):
                running.insert(live.id)
                live.identity = plugin.identity
                started.append(live)
                // Live from here: a quarantine during the rest of the batch finds it.
                table.withLock { $0.finishStart(of: plugin, .success(live)) }
            case let .failure(error):
                table.withLock { $0.finishStart(of: plugin, .failure(error)) }
                services.retire(plugin.plugin.id)
            }
        }
        // One registry update for the batch, of the plugins still live (one
        // quarantined meanwhile is out), with the pending interfaces as the
        // table has them now.
        table.withLock { table in
            // The table's entries, not the copies above: a published point's
            // providers may have joined them meanwhile.
            let stillLive = table.live.filter { plugin in started.contains { $0.id == plugin.id && $0.generation == plugin.generation } }
            registry.replaceProviders(
                of: Set(started.map(\.id)), with: stillLive.flatMap(\.providers), pending: table.pendingInterfaces)
        }
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
        return startInProcess(
            .image(image), path: path, identity: plugin.identity, generation: 1, state: SavedState(), activePlugins: running,
            interruptedStarts: catalog.interruptedStarts(of: path, identity: plugin.identity)
        ).map { started in
            var live = started.live
            live.contentHash = hash
            return live
        }
    }
}
