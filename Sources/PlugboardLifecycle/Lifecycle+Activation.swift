@_spi(PlugboardHost) import Plugboard
import PlugboardCore
import PlugboardAdmission
import PlugboardCatalog

extension Lifecycle {
    /// Starts the available plugins among `pluginIDs`, and the available
    /// plugins they require, each after what it requires (ties by file
    /// name), each on its own line (``PluginLine``): it is taken, started
    /// and published (its providers, what is still pending) alone, so a
    /// start elsewhere of an unrelated plugin runs beside it. One of them
    /// (or one it requires) being started elsewhere is waited for, at most
    /// until `deadline` (then this goes on without it and says so). Each
    /// load, init and activate runs with a crash-journal note.
    func startInOrder(_ pluginIDs: Set<String>, lookingUp interfaceID: String? = nil) {
        let order = table.withLock { $0.activationOrder(pluginIDs) }
        let deadline = ContinuousClock.now + configuration.startTimeout
        // One check for the batch, as for a discovery: each folder walked once.
        var ownership = OwnershipCheck()
        for id in order {
            while true {
                let step = table.withLock { table in
                    let step = table.nextStep(starting: id)
                    // Taken: no longer available, so its triggers go, with the take.
                    if case let .start(plugin, _) = step { services.triggers.remove([plugin.plugin.id]) }
                    return step
                }
                switch step {
                case .closed: return
                case .skip: break
                case let .start(plugin, line):
                    start(plugin, line, ownership: &ownership)
                case let .wait(line, holder):
                    if line.wait(until: deadline) { continue }
                    reportStillStarting(holder, waitedFor: id, lookingUp: interfaceID)
                }
                break
            }
        }
    }

    /// Starts one taken plugin, records how it went and publishes its
    /// providers with what is still pending, in one table change that also
    /// gives its line back; then wakes whoever waits on the line.
    private func start(_ plugin: AvailablePlugin, _ line: PluginLine, ownership: inout OwnershipCheck) {
        let running = Set(activePluginIDs)
        let started = { (ownership: inout OwnershipCheck) in
            self.requirementsRunning(plugin, running).flatMap { self.start(plugin, ownership: &ownership, running: running) }
        }
        let result = catalog.facts.withLock(\.startsOneAtATime)
            ? startTurns.take { started(&ownership) } : started(&ownership)
        table.withLock { table in
            switch result {
            case var .success(live):
                live.identity = plugin.identity
                table.finishStart(of: plugin, .success(live))
                registry.replaceProviders(of: [live.id], with: live.providers, pending: table.pendingInterfaces)
            case let .failure(error):
                table.finishStart(of: plugin, .failure(error))
                registry.replaceProviders(of: [], with: [], pending: table.pendingInterfaces)
            }
            table.dropLine(of: plugin.plugin.id, line)
        }
        if case .failure = result { services.retire(plugin.plugin.id) }
        line.release()
    }

    /// A start waited for did not end within the start timeout: the asker
    /// goes on with what is active, and the host says why.
    private func reportStillStarting(_ holder: String, waitedFor id: String, lookingUp interfaceID: String?) {
        let asked = interfaceID.map { "a lookup of \($0)" } ?? "a start of \(id)"
        let seconds = configuration.startTimeout.components.seconds
        services.report(HostDiagnostic(.warning, code: "start-still-running",
            message: "\(asked) waited \(seconds) s (the start timeout) for plugin \(holder), whose start is still running, and goes on with what is active; a plugin whose init or activate waits for a thread that needs that plugin causes this (look up from the thread after activate returns)",
            plugin: holder))
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
