@_spi(PlugboardHost) import Plugboard
import PlugboardRegistry

/// Extension points a plugin publishes (``Services/Extensions``): the host
/// does not know them until the publisher first asks for their providers.
extension Lifecycle {
    package func providers<Point: ExtensionPoint>(publishedAs point: Point.Type, activating: Bool) -> [Point.Provider] {
        if registry.declaredPoint(for: Point.interface.id) == nil {
            declare(point, isolatedCalls: .standard)
            collectProviders(of: Point.interface.id)
        }
        return activating ? registry.providers(of: point) : registry.activeProviders(of: point)
    }

    /// Adds the providers of `interfaceID` that active plugins contributed
    /// before it was declared (they were left out then), and marks it pending
    /// for the available plugins that provide it. No line is held: the
    /// publisher may ask while its own start holds its line.
    private func collectProviders(of interfaceID: String) {
        guard let point = registry.declaredPoint(for: interfaceID) else { return }
        var updated: [LivePlugin] = []
        for plugin in livePlugins {
            // An isolated plugin's providers cross only for points declared
            // before it starts.
            guard let instance = plugin.instance else { continue }
            let found = instance.contributions()
                .filter { $0.interfaceID == interfaceID && point.accepts($0.provider) }
                .map { RegisteredProvider(pluginID: plugin.id, generation: plugin.generation, interfaceID: interfaceID, provider: $0.provider) }
            guard !found.isEmpty else { continue }
            var plugin = plugin
            plugin.providers = plugin.providers.filter { $0.interfaceID != interfaceID } + found
            updated.append(plugin)
        }
        table.withLock { table in
            // Only the generations still live: one reloaded meanwhile keeps its new providers.
            var replaced: [LivePlugin] = []
            for plugin in updated {
                guard let index = table.live.firstIndex(where: { $0.id == plugin.id && $0.generation == plugin.generation }) else { continue }
                table.live[index] = plugin
                replaced.append(plugin)
            }
            registry.replaceProviders(of: Set(replaced.map(\.id)), with: replaced.flatMap(\.providers), pending: table.pendingInterfaces)
        }
    }
}
