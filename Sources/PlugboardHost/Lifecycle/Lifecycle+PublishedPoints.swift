@_spi(PlugboardHost) import Plugboard

/// Extension points a plugin publishes (``Services/Extensions``): the host
/// does not know them until the publisher first asks for their providers.
extension Lifecycle {
    func providers<Point: ExtensionPoint>(publishedAs point: Point.Type) -> [Point.Provider] {
        if registry.declaredPoint(for: Point.interface.id) == nil {
            registry.declare(DeclaredExtensionPoint(point, isolatedCalls: .standard))
            collectProviders(of: Point.interface.id)
        }
        return registry.providers(of: point)
    }

    /// Adds the providers of `interfaceID` that active plugins contributed
    /// before it was declared (they were left out then), and marks it pending
    /// for the available plugins that provide it. Not under ``serial``: the
    /// publisher may ask while its own activation holds it.
    private func collectProviders(of interfaceID: String) {
        guard let point = registry.declaredPoint(for: interfaceID) else { return }
        var updated: [LivePlugin] = []
        for plugin in live.withLock({ $0 }) {
            // An isolated plugin's providers cross only for points declared
            // before it starts.
            guard let instance = plugin.instance else { continue }
            let found = ExtensionRegistry.$isActivating.withValue(true) { instance.contributions() }
                .filter { $0.interfaceID == interfaceID && point.accepts($0.provider) }
                .map { RegisteredProvider(pluginID: plugin.id, generation: plugin.generation, interfaceID: interfaceID, provider: $0.provider) }
            guard !found.isEmpty else { continue }
            var plugin = plugin
            plugin.providers = plugin.providers.filter { $0.interfaceID != interfaceID } + found
            updated.append(plugin)
        }
        live.withLock { running in
            for plugin in updated {
                if let index = running.firstIndex(where: { $0.id == plugin.id && $0.generation == plugin.generation }) { running[index] = plugin }
            }
        }
        registry.replaceProviders(of: Set(updated.map(\.id)), with: updated.flatMap(\.providers), pending: catalog.pendingInterfaces())
    }
}
