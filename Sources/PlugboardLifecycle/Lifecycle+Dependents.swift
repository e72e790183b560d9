@_spi(PlugboardHost) import Plugboard
import PlugboardCore
import PlugboardAdmission

/// What the host does to the plugins that build on one it reloads or loses:
/// stop them before it changes (state saved), start them again on what
/// replaced it, or keep them stopped with the reason.
extension Lifecycle {
    /// A generation's state, saved for the next (``ReloadableState``).
    struct SavedState {
        var bytes: [UInt8]?
        /// What went wrong saving it, if something did.
        var note: String?
    }

    /// A dependent stopped for a reload, with what it needs to start again.
    struct StoppedDependent {
        let plugin: LivePlugin
        let state: SavedState
    }

    /// The live plugins that require `id`, directly or through each other,
    /// optionally or not, in activation order.
    func dependents(of id: String) -> [LivePlugin] {
        let running = livePlugins
        var affected: Set<String> = [id]
        var changed = true
        // Optional requirements may point forward in activation order:
        // repeat until nothing more is reached.
        while changed {
            changed = false
            for plugin in running where !affected.contains(plugin.id) && plugin.requires.contains(where: { affected.contains($0.id) }) {
                affected.insert(plugin.id)
                changed = true
            }
        }
        return running.filter { $0.id != id && affected.contains($0.id) }
    }

    /// What reloading `old` into the build `scan` does to its dependents:
    /// a dependent whose range does not accept the new version stays
    /// stopped (`dependency-version`), and so does one that requires it.
    func plan(reloading old: LivePlugin, to scan: ScannedPlugin) -> (ReloadPlan, [LivePlugin]) {
        let dependents = dependents(of: old.id)
        var refused: [String: PluginLoadError] = [:]
        var refusals: [ReloadPlan.Refusal] = []
        var restarts: [String] = []
        for dependent in dependents {
            let error: PluginLoadError?
            if let requirement = dependent.requires.first(where: { $0.id == old.id && !$0.optional }),
               let range = VersionRange(requirement.range), !range.contains(scan.semanticVersion) {
                error = .dependencyVersion(path: dependent.path, id: dependent.id, requirement: requirement, found: scan.semanticVersion)
            } else if let blocked = dependent.requires.first(where: { !$0.optional && refused[$0.id] != nil }) {
                error = .dependency(.dependencyRejected, path: dependent.path, id: dependent.id,
                    reason: "requires plugin \(blocked.id), which stopped (\(refused[blocked.id]!.code.rawValue)); fix \(blocked.id) first")
            } else {
                error = nil
            }
            if let error {
                refused[dependent.id] = error
                refusals.append(.init(pluginID: dependent.id, error: error))
            } else {
                restarts.append(dependent.id)
            }
        }
        let plan = ReloadPlan(
            pluginID: old.id, currentVersion: old.version, newVersion: scan.version, rejection: nil,
            stops: dependents.reversed().map(\.id), restarts: restarts, refusals: refusals)
        return (plan, dependents)
    }

    /// Saves each dependent's state, takes their providers out of the
    /// registry in one update, and stops them, newest first.
    func stopDependents(_ dependents: [LivePlugin], savingState: Bool = true) -> [StoppedDependent] {
        guard !dependents.isEmpty else { return [] }
        let stopped = dependents.map { StoppedDependent(plugin: $0, state: savingState ? savedState(of: $0) : SavedState()) }
        let ids = Set(dependents.map(\.id))
        table.withLock { $0.live.removeAll { plugin in ids.contains(plugin.id) } }
        registry.replaceProviders(of: ids, with: [])
        for plugin in dependents.reversed() {
            plugin.stop()
            services.retire(plugin.id, generation: plugin.generation)
        }
        return stopped
    }

    /// Starts stopped dependents again from the images they ran, in
    /// activation order, each as its next generation with its saved state;
    /// those in `refusals`, and those whose required plugin did not start,
    /// stay stopped. Publishes the started ones' providers in one update.
    func restartDependents(_ stopped: [StoppedDependent], refusals: [String: PluginLoadError]) -> [ReloadOutcome.Dependent] {
        var results: [ReloadOutcome.Dependent] = []
        var started: [LivePlugin] = []
        var running = Set(activePluginIDs)
        for dependent in stopped {
            let plugin = dependent.plugin
            let result: Result<(live: LivePlugin, note: String?), PluginLoadError>
            if let refusal = refusals[plugin.id] {
                result = .failure(refusal)
            } else if let missing = plugin.requires.first(where: { !$0.optional && !running.contains($0.id) }) {
                result = .failure(.dependency(.dependencyRejected, path: plugin.path, id: plugin.id,
                    reason: "requires plugin \(missing.id), which did not start again; fix \(missing.id) first"))
            } else {
                result = restart(plugin, state: dependent.state, activePlugins: running)
            }
            switch result {
            case .success((var live, let note)):
                live.contentHash = plugin.contentHash
                running.insert(live.id)
                started.append(live)
                results.append(.init(pluginID: plugin.id, generation: live.generation, stateNote: note, error: nil))
            case let .failure(error):
                results.append(.init(pluginID: plugin.id, generation: plugin.generation, stateNote: nil, error: error))
            }
        }
        table.withLock { table in
            table.live.append(contentsOf: started)
            for plugin in started { table.setGeneration(of: plugin.id, plugin.generation) }
        }
        registry.replaceProviders(of: Set(started.map(\.id)), with: started.flatMap(\.providers))
        return results
    }

    /// A dependent's next generation, from the image it ran.
    private func restart(_ plugin: LivePlugin, state: SavedState, activePlugins: Set<String>) -> Result<(live: LivePlugin, note: String?), PluginLoadError> {
        let next = plugin.generation + 1
        switch plugin.running {
        case let .inProcess(_, loaded):
            return startInProcess(.loaded(loaded), path: plugin.path, identity: plugin.identity, generation: next, state: state, activePlugins: activePlugins)
        case .isolated:
            guard let image = plugin.image, let isolation = isolation(of: plugin.id) else {
                return .failure(.isolationFailed(path: plugin.path, code: .pluginUnavailable, reason: "its child cannot be started again"))
            }
            return startIsolated(image, isolation: isolation, generation: next, state: state.bytes, activePlugins: activePlugins)
                .map { started in
                    var live = started.live
                    live.identity = plugin.identity
                    return (live, started.stateNote ?? state.note)
                }
        }
    }

    /// The state of a running generation, asked of its child when isolated.
    func savedState(of plugin: LivePlugin) -> SavedState {
        if let child = plugin.isolated {
            if child.pooled { return SavedState(note: "a pool of children hands over no state: the new generation starts fresh") }
            switch child.savedState() {
            case let .success(state): return SavedState(bytes: state)
            // Thrown: it does not adopt ReloadableState.
            case let .failure(error) where error.code == .pluginThrew: return SavedState()
            case let .failure(error):
                return SavedState(note: "state not saved by the old generation (\(error.message)); the new one starts fresh")
            }
        }
        guard let stateful = plugin.instance as? any ReloadableState else { return SavedState() }
        do {
            return SavedState(bytes: try stateful.encodedState())
        } catch {
            return SavedState(note: "state not saved by the old generation (\(error)); the new one starts fresh")
        }
    }

    /// A dependent stopped for good while the host runs: its record says
    /// why, and the plugins that optionally require it hear of it.
    func recordStopped(_ id: String, _ error: PluginLoadError) {
        table.withLock { $0.stopActive(id, error) }
        announceStopped(id, error)
    }

    /// Tells every subscriber (the plugins that optionally require it) that
    /// plugin `id` stopped.
    private func announceStopped(_ id: String, _ error: PluginLoadError) {
        _ = services.events.publish(
            EventPayload(PluginStopped(pluginID: id, code: error.code.rawValue, reason: error.reason)), from: .host)
    }

    /// Plugin `id` was quarantined while running: the plugins that require
    /// it stop with `dependency-quarantined` (a stop, not a crash: nothing is
    /// charged to them), and so do, in turn, those that require them; the
    /// ones that require it optionally keep running and hear of it
    /// (``PluginStopped``).
    func stopDependents(ofQuarantined id: String, _ error: PluginLoadError) {
        stopDependents(of: id, error, gone: "quarantined (\(error.code.rawValue))", code: .dependencyQuarantined)
    }

    /// Plugin `id` stopped for good while the host runs (`error` says why,
    /// `gone` says it in a dependent's reason): the plugins that require it
    /// stop with `code`, transitively; every plugin stopped is announced.
    func stopDependents(of id: String, _ error: PluginLoadError, gone description: String, code: PluginLoadError.Code) {
        announceStopped(id, error)
        var gone: [String: String] = [id: description]
        var stopping: [LivePlugin] = []
        for plugin in dependents(of: id) where plugin.requires.contains(where: { !$0.optional && gone[$0.id] != nil }) {
            gone[plugin.id] = "stopped (\(code.rawValue))"
            stopping.append(plugin)
        }
        guard !stopping.isEmpty else { return }
        _ = stopDependents(stopping, savingState: false)
        for plugin in stopping {
            let requirement = plugin.requires.first { !$0.optional && gone[$0.id] != nil }!
            let fix = code == .dependencyQuarantined ? "fix \(id) first (plugboard list --rescan lifts a quarantine once the file is fixed)" : "install \(id) again"
            recordStopped(plugin.id, .dependency(code, path: plugin.path, id: plugin.id,
                reason: "requires plugin \(requirement.id), which is \(gone[requirement.id]!); \(fix)"))
        }
    }
}
