@_spi(PlugboardHost) import Plugboard
import PlugboardCore

/// A running host looks at its plugins directory again (``PluginHost/refresh()``).
extension Lifecycle {
    /// Retires plugins whose file is gone, forgets available ones whose file
    /// changed, discovers (`discovering`), starts the new `startup` plugins
    /// and those providing a point someone holds a handle on (a handle's
    /// reads check nothing, so it would never see them), and reloads active
    /// plugins whose file changed.
    package func refresh(discovering: () throws(PluginDirectory.ScanError) -> [PluginRecord]) throws(PluginDirectory.ScanError) -> RefreshOutcome {
        let before = Dictionary(records.map { ($0.path, $0.status) }, uniquingKeysWith: { first, _ in first })
        let (changed, gone) = changedFiles()
        retire(gone)
        let reexamined = forgetChangedFiles()
        let discovered = try discovering()
        activate(pluginIDs: availableIDs(trigger: .startup))
        let handled = registry.interfacesWithHandles
        if !handled.isEmpty {
            activate(pluginIDs: table.withLock { table in handled.reduce(into: Set<String>()) { $0.formUnion(table.availableIDs(providing: $1)) } })
        }
        let reloaded = changed.map { reload($0.id, from: $0.path, verification: .load, beforeActing: { _ in }) }
        let now = withIsolation(current(discovered))
        let added = now.filter { before[$0.path] == nil }
        let reloadedPaths = Set(changed.map(\.path))
        var outcome = RefreshOutcome(added: added, reloaded: reloaded, removed: gone.map(\.id), reexamined: reexamined)
        outcome.changed = now.compactMap { record in
            guard let previous = before[record.path], previous != record.status, !reloadedPaths.contains(record.path) else { return nil }
            return RefreshOutcome.StatusChange(record: record, previous: previous)
        }
        return outcome
    }

    /// Active plugins whose file changed (to reload) or is gone (to retire),
    /// judged by file identity, as the registry cache judges a file.
    func changedFiles() -> (changed: [LivePlugin], gone: [LivePlugin]) {
        var changed: [LivePlugin] = [], gone: [LivePlugin] = []
        for plugin in livePlugins {
            guard let now = FileIdentity.of(path: plugin.path) else {
                gone.append(plugin)
                continue
            }
            if let identity = plugin.identity, identity != now { changed.append(plugin) }
        }
        return (changed, gone)
    }

    /// Takes plugins whose file is gone out of the registry, stops them
    /// (calls already running finish on them, as on a reload's old
    /// generation), forgets their records, and stops the plugins that
    /// require them (`dependency-missing`).
    func retire(_ plugins: [LivePlugin]) {
        guard !plugins.isEmpty else { return }
        changes.run { shutDown in
            guard !shutDown else { return }
            holdingLines(of: Set(plugins.map(\.id))) { retireHoldingLines(plugins) }
        }
    }

    private func retireHoldingLines(_ plugins: [LivePlugin]) {
        // The generations still live now: one reloaded since it was looked at is not this one.
        let retired = table.withLock { table in
            let current = table.live.filter { plugin in plugins.contains { $0.id == plugin.id && $0.generation == plugin.generation } }
            let ids = Set(current.map(\.id))
            table.live.removeAll { plugin in current.contains { $0.id == plugin.id && $0.generation == plugin.generation } }
            registry.replaceProviders(of: ids, with: [], pending: table.pendingInterfaces)
            return current
        }
        for plugin in retired.reversed() {
            plugin.stop()
            services.retire(plugin.id, generation: plugin.generation)
        }
        table.withLock { $0.forgetRecords(of: Set(retired.map(\.path))) }
        // The plugins that stop are announced (PluginStopped) to handlers,
        // which may look up more (a lookup takes no change line).
        for plugin in retired {
            stopDependents(of: plugin.id, .dependency(.dependencyMissing, path: plugin.path, id: plugin.id,
                reason: "was removed: its file is gone"), gone: "removed (its file is gone)", code: .dependencyMissing)
        }
    }
}

extension Lifecycle {
    /// For a refresh: forgets available plugins whose file changed or is
    /// gone, their triggers and pending interfaces, and the records of
    /// refused files that are gone. Files are looked at outside the table's
    /// lock. Their ids.
    func forgetChangedFiles() -> [String] {
        let (available, refused) = table.withLock { table in
            (table.available.values.map { ($0.plugin.id, $0.path, $0.identity) },
             table.records.filter { $0.status != .active && $0.status != .available }.map(\.path))
        }
        let changed = Set(available.filter { FileIdentity.of(path: $0.1) != $0.2 }.map(\.0))
        let gone = Set(refused.filter { FileIdentity.of(path: $0) == nil })
        return table.withLock { table in
            let forgotten = table.forget(changed: changed, gonePaths: gone)
            guard !forgotten.isEmpty else { return forgotten }
            services.triggers.remove(Set(forgotten))
            registry.replaceProviders(of: [], with: [], pending: table.pendingInterfaces)
            return forgotten
        }
    }
}
