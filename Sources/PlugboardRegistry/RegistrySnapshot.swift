/// An immutable view of every registered provider. Readers get whole
/// snapshots, so nobody ever sees a half-updated registry.
@usableFromInline
final class RegistrySnapshot: Sendable {
    /// Providers per interface id, ordered by plugin id.
    let byInterface: [String: [RegisteredProvider]]
    /// Typed arrays per extension point type, for the fast read path. An
    /// array searched linearly, not a dictionary: a host declares a handful of
    /// points, and comparing a few pointers costs less than hashing one.
    @usableFromInline let typed: [(point: ObjectIdentifier, providers: any TypedProviderList)]
    /// Interface ids that available (not yet active) plugins provide.
    let pending: Set<String>

    static let empty = RegistrySnapshot(byInterface: [:], typed: [], pending: [])

    init(byInterface: [String: [RegisteredProvider]], typed: [(point: ObjectIdentifier, providers: any TypedProviderList)], pending: Set<String>) {
        self.byInterface = byInterface
        self.typed = typed
        self.pending = pending
    }

    /// A snapshot of `providers` for the declared points. Order is stable:
    /// by plugin id, then by position in the plugin's contributions. A
    /// point's list from `previous` is reused when its providers did not
    /// change, so handles of that point see no change.
    init(providers: [RegisteredProvider], points: [DeclaredExtensionPoint], pending: Set<String>, previous: RegistrySnapshot? = nil) {
        var grouped: [String: [RegisteredProvider]] = [:]
        for provider in providers { grouped[provider.interfaceID, default: []].append(provider) }
        for key in grouped.keys {
            // Stable sort keeps each plugin's own contribution order.
            grouped[key] = grouped[key]!.enumerated()
                .sorted { ($0.element.pluginID, $0.offset) < ($1.element.pluginID, $1.offset) }
                .map(\.element)
        }
        var typed: [(point: ObjectIdentifier, providers: any TypedProviderList)] = []
        for point in points {
            let registered = grouped[point.interface.id] ?? []
            let isPending = pending.contains(point.interface.id)
            if let old = previous?.providers(of: point.pointType), old.pending == isPending,
               old.origin == registered.map({ ProviderOrigin(pluginID: $0.pluginID, generation: $0.generation) }) {
                typed.append((point.pointType, old))
            } else {
                typed.append((point.pointType, point.makeTypedProviders(registered, isPending)))
            }
        }
        self.byInterface = grouped
        self.typed = typed
        self.pending = pending
    }

    /// The typed providers of the point whose type is `point`.
    @inlinable @inline(__always)
    func providers(of point: ObjectIdentifier) -> (any TypedProviderList)? {
        for entry in typed where entry.point == point { return entry.providers }
        return nil
    }
}
