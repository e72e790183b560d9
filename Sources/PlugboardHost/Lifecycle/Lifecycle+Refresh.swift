@_spi(PlugboardHost) import Plugboard

/// A running host looks at its plugins directory again (``PluginHost/refresh()``).
extension Lifecycle {
    /// Active plugins whose file changed (to reload) or is gone (to retire),
    /// judged by file identity, as the registry cache judges a file.
    func changedFiles() -> (changed: [LivePlugin], gone: [LivePlugin]) {
        var changed: [LivePlugin] = [], gone: [LivePlugin] = []
        for plugin in live.withLock({ $0 }) {
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
        let ids = Set(plugins.map(\.id))
        serial.withLock { shutDown in
            guard !shutDown else { return }
            live.withLock { $0.removeAll { ids.contains($0.id) } }
            registry.replaceProviders(of: ids, with: [], pending: catalog.pendingInterfaces())
            ExtensionRegistry.$isActivating.withValue(true) {
                for plugin in plugins.reversed() {
                    plugin.stop()
                    services.retire(plugin.id, generation: plugin.generation)
                }
            }
            catalog.forgetRecords(of: Set(plugins.map(\.path)))
        }
        for plugin in plugins {
            stopDependents(of: plugin.id, .dependency(.dependencyMissing, path: plugin.path, id: plugin.id,
                reason: "was removed: its file is gone"), gone: "removed (its file is gone)", code: .dependencyMissing)
        }
    }
}
