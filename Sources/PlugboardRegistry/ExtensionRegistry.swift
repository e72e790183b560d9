import Plugboard
import Synchronization
import PlugboardCore

/// The one place where the host's extension points and the plugins'
/// providers meet.
///
/// Reads are safe from any number of threads at once and take no shared lock
/// (each thread caches the snapshot it last read); a reader always sees a whole registry, before or
/// after a load or reload, never in between.
///
/// ```swift
/// for command in host.registry.providers(of: Commands.self) {
///     print(command.name)
/// }
/// ```
public final class ExtensionRegistry: Sendable {
    private let points = Locked<[DeclaredExtensionPoint]>([])
    @usableFromInline let cell = SnapshotCell(.empty)
    /// One handle per point type, kept current by every update.
    private let handles = Mutex<[ObjectIdentifier: any AnyProviderHandle]>([:])
    /// The interfaces of the points with a handle: a plugin that provides
    /// one and becomes available later (a live install) is activated by the
    /// refresh that finds it, as the handle's first read would have.
    private let handled = Mutex<Set<String>>([])

    package var interfacesWithHandles: Set<String> { handled.withLock { $0 } }
    /// Where a lookup sends its one request when a point's providers are
    /// not started yet: the host's lifecycle, which starts them and
    /// publishes a new snapshot (nil: a registry without a host, which
    /// starts nothing). The registry itself never loads or runs plugin code.
    private let activator: (any PluginActivating)?

    package init(activator: (any PluginActivating)? = nil) {
        self.activator = activator
    }

    // MARK: - Reading

    /// Every provider of `point`, ordered by plugin id. Empty if the point was
    /// never declared or nobody provides it.
    ///
    /// The first lookup of a point that available plugins provide activates
    /// them (once, however many threads ask at the same time); later lookups
    /// read the snapshot only.
    ///
    /// Inlinable, so that the caller's copy is specialized for `Point`: the
    /// generic entry looked up `Point.Provider`'s metadata on every call.
    @inlinable
    public func providers<Point: ExtensionPoint>(of point: Point.Type) -> [Point.Provider] {
        let items = cell.withSnapshot { snapshot -> [Point.Provider]? in
            guard let list = snapshot.providers(of: ObjectIdentifier(point)) else { return [] }
            // The list for this key was built by DeclaredExtensionPoint<Point>.
            let typed = unsafeDowncast(list, to: TypedProviders<Point.Provider>.self)
            return typed.pending ? nil : typed.items
        }
        return items ?? activatingProviders(of: point)
    }

    /// Every provider of `point`, as ``providers(of:)`` returns them, for
    /// async callers: when available plugins must be started first, the
    /// start runs on a thread of its own while the caller's task is
    /// suspended, so no thread of Swift's pool waits on plugin code (a
    /// plugin's `init`, a child's start). Once started, the snapshot answers
    /// with no suspension.
    public func activatedProviders<Point: ExtensionPoint>(of point: Point.Type) async -> [Point.Provider] {
        let items = cell.withSnapshot { snapshot -> [Point.Provider]? in
            guard let list = snapshot.providers(of: ObjectIdentifier(point)) else { return [] }
            let typed = unsafeDowncast(list, to: TypedProviders<Point.Provider>.self)
            return typed.pending ? nil : typed.items
        }
        if let items { return items }
        let interfaceID = Point.interface.id
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let started = startDetachedThread { [self] in
                _ = activate(interfaceID)
                continuation.resume()
            }
            // Without a thread to spare, the start runs here (as the sync lookup would).
            if !started {
                _ = activate(interfaceID)
                continuation.resume()
            }
        }
        return activeProviders(of: point)
    }

    /// The providers of a point whose providers are not active yet, after
    /// activating them.
    @inline(never) @usableFromInline
    func activatingProviders<Point: ExtensionPoint>(of point: Point.Type) -> [Point.Provider] {
        guard let list = cell.read().providers(of: ObjectIdentifier(point)) else { return [] }
        let current = unsafeDowncast(list, to: TypedProviders<Point.Provider>.self)
        guard current.pending, activate(Point.interface.id), let list = cell.read().providers(of: ObjectIdentifier(point)) else { return current.items }
        return unsafeDowncast(list, to: TypedProviders<Point.Provider>.self).items
    }

    /// Asks the host to start the providers of `interfaceID`; false without
    /// a host. (Asked from plugin code the host is starting, the host starts
    /// nothing and the lookup returns the providers already active.)
    private func activate(_ interfaceID: String) -> Bool {
        guard let activator else { return false }
        activator.activateProviders(of: interfaceID)
        return true
    }

    /// A handle on the providers of `point` that follows every change (see
    /// ``ProviderHandle``): for hot paths, where a lookup per call costs too
    /// much. The first call activates available providers, as a lookup does;
    /// later calls return the same handle.
    public func handle<Point: ExtensionPoint>(for point: Point.Type) -> ProviderHandle<Point> {
        _ = providers(of: point)
        return cell.withCurrent { snapshot in
            handles.withLock { handles in
                if let existing = handles[ObjectIdentifier(point)] {
                    return unsafeDowncast(existing, to: ProviderHandle<Point>.self)
                }
                let list = snapshot.providers(of: ObjectIdentifier(point))
                    .map { unsafeDowncast($0, to: TypedProviders<Point.Provider>.self) }
                let handle = ProviderHandle<Point>(list ?? TypedProviders([], pending: false, origin: []))
                handles[ObjectIdentifier(point)] = handle
                handled.withLock { _ = $0.insert(Point.interface.id) }
                return handle
            }
        }
    }

    /// The first provider of `point` for which `matching` is true.
    public func provider<Point: ExtensionPoint>(
        of point: Point.Type, where matching: (Point.Provider) -> Bool
    ) -> Point.Provider? {
        providers(of: point).first(where: matching)
    }

    /// Every provider registered for an interface id, with the plugin it came from.
    public func registrations(for interfaceID: String) -> [RegisteredProvider] {
        let snapshot = cell.read()
        if snapshot.pending.contains(interfaceID), activate(interfaceID) {
            return cell.read().byInterface[interfaceID] ?? []
        }
        return snapshot.byInterface[interfaceID] ?? []
    }

    /// The providers of `point` active now, activating nothing.
    package func activeProviders<Point: ExtensionPoint>(of point: Point.Type) -> [Point.Provider] {
        guard let list = cell.read().providers(of: ObjectIdentifier(point)) else { return [] }
        return unsafeDowncast(list, to: TypedProviders<Point.Provider>.self).items
    }

    /// The providers registered for an interface id now, activating nothing.
    package func activeRegistrations(for interfaceID: String) -> [RegisteredProvider] {
        cell.read().byInterface[interfaceID] ?? []
    }

    /// The interfaces the host declared.
    public var declaredInterfaces: [Interface] {
        points.withLock { $0.map(\.interface) }
    }

    // MARK: - Writing (host only)

    package func declare(_ point: DeclaredExtensionPoint) {
        points.withLock { points in
            points.removeAll { $0.interface.id == point.interface.id }
            points.append(point)
        }
        rebuild()
    }

    package func declaredPoint(for interfaceID: String) -> DeclaredExtensionPoint? {
        points.withLock { $0.first { $0.interface.id == interfaceID } }
    }

    /// Replaces every provider of `pluginIDs` with `providers`, in one step;
    /// `pending` (when given) replaces the interfaces available plugins provide.
    package func replaceProviders(of pluginIDs: Set<String>, with providers: [RegisteredProvider], pending: Set<String>? = nil) {
        update(pending: pending) { old in old.filter { !pluginIDs.contains($0.pluginID) } + providers }
    }

    /// Takes out the providers of generation `generation` of plugin `id`
    /// only: a newer generation published meanwhile stays.
    package func removeProviders(of id: String, generation: Int) {
        update { old in old.filter { $0.pluginID != id || $0.generation != generation } }
    }

    private func rebuild() {
        update { old in Array(old) }
    }

    /// The providers of the snapshot in force, as read inside an update.
    private typealias Current = FlattenSequence<Dictionary<String, [RegisteredProvider]>.Values>

    /// One new snapshot: `providers` from the current ones, the declared
    /// points read inside the update (so a concurrent declare() is never
    /// lost), `pending` when given.
    private func update(
        pending: Set<String>? = nil, providers: (Current) -> [RegisteredProvider]
    ) {
        cell.update { old in
            publishToHandles(RegistrySnapshot(
                providers: providers(old.byInterface.values.joined()), points: points.withLock { $0 },
                pending: pending ?? old.pending, previous: old))
        }
    }

    /// Runs under the cell's update lock, so handles change in the order snapshots do.
    private func publishToHandles(_ snapshot: RegistrySnapshot) -> RegistrySnapshot {
        handles.withLock { handles in
            for handle in handles.values { handle.publish(from: snapshot) }
        }
        return snapshot
    }
}
