import Plugboard
import Synchronization

/// The one place where the host's extension points and the plugins'
/// providers meet.
///
/// Reads are safe from any number of threads at once and take no shared lock
/// (see ``SnapshotCell``); a reader always sees a whole registry, before or
/// after a load or reload, never in between.
///
/// ```swift
/// for command in host.registry.providers(of: Commands.self) {
///     print(command.name)
/// }
/// ```
public final class ExtensionRegistry: Sendable {
    private let points = Locked<[DeclaredExtensionPoint]>([])
    private let cell = SnapshotCell(.empty)

    init() {}

    // MARK: - Reading

    /// Every provider of `point`, ordered by plugin id. Empty if the point was
    /// never declared or nobody provides it.
    public func providers<Point: ExtensionPoint>(of point: Point.Type) -> [Point.Provider] {
        guard let list = cell.read().typed[ObjectIdentifier(point)] else { return [] }
        // The list for this key was built by DeclaredExtensionPoint<Point>.
        return unsafeDowncast(list, to: TypedProviders<Point.Provider>.self).items
    }

    /// The first provider of `point` for which `matching` is true.
    public func provider<Point: ExtensionPoint>(
        of point: Point.Type, where matching: (Point.Provider) -> Bool
    ) -> Point.Provider? {
        providers(of: point).first(where: matching)
    }

    /// Every provider registered for an interface id, with the plugin it came from.
    public func registrations(for interfaceID: String) -> [RegisteredProvider] {
        cell.read().byInterface[interfaceID] ?? []
    }

    /// The interfaces the host declared.
    public var declaredInterfaces: [Interface] {
        points.withLock { $0.map(\.interface) }
    }

    // MARK: - Writing (host only)

    func declare(_ point: DeclaredExtensionPoint) {
        points.withLock { points in
            points.removeAll { $0.interface.id == point.interface.id }
            points.append(point)
        }
        rebuild()
    }

    func declaredPoint(for interfaceID: String) -> DeclaredExtensionPoint? {
        points.withLock { $0.first { $0.interface.id == interfaceID } }
    }

    /// Replaces every provider of `pluginID` with `providers`, in one step.
    func replaceProviders(of pluginIDs: Set<String>, with providers: [RegisteredProvider]) {
        // Points are read inside the update, so a concurrent declare() is never lost.
        cell.update { old in
            let kept = old.byInterface.values.joined().filter { !pluginIDs.contains($0.pluginID) }
            return RegistrySnapshot(providers: Array(kept) + providers, points: points.withLock { $0 })
        }
    }

    private func rebuild() {
        cell.update { old in
            RegistrySnapshot(providers: Array(old.byInterface.values.joined()), points: points.withLock { $0 })
        }
    }
}
