/// An immutable view of every registered provider. Readers get whole
/// snapshots, so nobody ever sees a half-updated registry.
final class RegistrySnapshot: Sendable {
    /// Providers per interface id, ordered by plugin id.
    let byInterface: [String: [RegisteredProvider]]
    /// Typed arrays per extension point type, for the fast read path.
    let typed: [ObjectIdentifier: any TypedProviderList]
    /// Interface ids that available (not yet active) plugins provide.
    let pending: Set<String>

    static let empty = RegistrySnapshot(byInterface: [:], typed: [:], pending: [])

    init(byInterface: [String: [RegisteredProvider]], typed: [ObjectIdentifier: any TypedProviderList], pending: Set<String>) {
        self.byInterface = byInterface
        self.typed = typed
        self.pending = pending
    }

    /// A snapshot of `providers` for the declared points. Order is stable:
    /// by plugin id, then by position in the plugin's contributions.
    init(providers: [RegisteredProvider], points: [DeclaredExtensionPoint], pending: Set<String>) {
        var grouped: [String: [RegisteredProvider]] = [:]
        for provider in providers { grouped[provider.interfaceID, default: []].append(provider) }
        for key in grouped.keys {
            // Stable sort keeps each plugin's own contribution order.
            grouped[key] = grouped[key]!.enumerated()
                .sorted { ($0.element.pluginID, $0.offset) < ($1.element.pluginID, $1.offset) }
                .map(\.element)
        }
        var typed: [ObjectIdentifier: any TypedProviderList] = [:]
        for point in points {
            typed[point.pointType] = point.makeTypedProviders(
                (grouped[point.interface.id] ?? []).map(\.provider), pending.contains(point.interface.id))
        }
        self.byInterface = grouped
        self.typed = typed
        self.pending = pending
    }
}
