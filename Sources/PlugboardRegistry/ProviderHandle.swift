import Plugboard
import Synchronization

/// The providers of one extension point, kept current by the registry: get it
/// once, call through it on hot paths.
///
/// ```swift
/// let commands = host.registry.handle(for: Commands.self)
/// // later, as often as needed:
/// for command in commands.providers { ... }
/// ```
///
/// Reading ``providers`` is one atomic load: no lookup, no lock, no check.
/// The registry pushes the new list into the handle whenever it changes (a
/// load, a lazy activation, a hot reload, a shutdown), so a caller sees a new
/// generation's provider from its next read on.
///
/// Getting the handle activates the available plugins that provide the point,
/// as the first ``ExtensionRegistry/providers(of:)`` does. A plugin that
/// becomes available later is activated by the next lookup or trigger, or
/// by the refresh that finds it (a live install), never by reading the
/// handle (reads check nothing).
///
/// Memory: a reader holds no reference while it reads, so the lists a handle
/// has held are kept, not freed, for as long as the handle (that is, the
/// registry) lives: one small array per change of the point's providers, with
/// the provider objects in it, and a box holding its first provider. A thousand reloads of a plugin keep a thousand
/// retired lists of that plugin's providers, and their images stay mapped
/// anyway (Swift images are never unloaded).
public final class ProviderHandle<Point: ExtensionPoint>: Sendable {
    /// The current list, as the bits of an unmanaged `TypedProviders` that
    /// `lists` keeps alive.
    @usableFromInline let current: Atomic<UInt>
    /// The current list's first provider in a box of its own (bits of an
    /// unmanaged `FirstProvider`), 0 when the list is empty: ``withFirst(_:)``
    /// reads the provider in place, where one read through the list's
    /// element pointer is a copy (about 5 ns of the 10 a call cost).
    @usableFromInline let currentFirst: Atomic<UInt>
    /// Every list and first-provider box published here, so a reader's
    /// unretained one stays valid.
    private let lists: Mutex<(lists: [TypedProviders<Point.Provider>], firsts: [FirstProvider<Point.Provider>])>

    init(_ list: TypedProviders<Point.Provider>) {
        current = Atomic(UInt(bitPattern: Unmanaged.passUnretained(list).toOpaque()))
        let first = list.items.first.map(FirstProvider.init)
        currentFirst = Atomic(first.map { UInt(bitPattern: Unmanaged.passUnretained($0).toOpaque()) } ?? 0)
        lists = Mutex(([list], first.map { [$0] } ?? []))
    }

    /// Every provider of the point, ordered by plugin id, as of the last change.
    @inlinable
    public var providers: [Point.Provider] {
        let bits = current.load(ordering: .acquiring)
        // Kept alive by `lists` for the handle's lifetime (see the type's note).
        return Unmanaged<TypedProviders<Point.Provider>>
            .fromOpaque(UnsafeRawPointer(bitPattern: bits).unsafelyUnwrapped)
            ._withUnsafeGuaranteedRef { $0.items }
    }

    /// The first provider (by plugin id), for points with one provider: no
    /// array is handed out, so no reference count changes but the provider's.
    @inlinable
    public var first: Point.Provider? {
        let bits = current.load(ordering: .acquiring)
        return Unmanaged<TypedProviders<Point.Provider>>
            .fromOpaque(UnsafeRawPointer(bitPattern: bits).unsafelyUnwrapped)
            ._withUnsafeGuaranteedRef { $0.items.first }
    }

    /// Calls `body` with the first provider, lent rather than copied: the
    /// cheapest call through a handle. nil when the point has no provider.
    ///
    /// ```swift
    /// let greeting = try commands.withFirst { try $0.run(arguments: ["Ada"]) }
    /// ```
    @inlinable
    public func withFirst<Result>(_ body: (borrowing Point.Provider) throws -> Result) rethrows -> Result? {
        let bits = currentFirst.load(ordering: .acquiring)
        guard bits != 0 else { return nil }
        // Kept alive by `lists` for the handle's lifetime (see the type's note).
        return try Unmanaged<FirstProvider<Point.Provider>>
            .fromOpaque(UnsafeRawPointer(bitPattern: bits).unsafelyUnwrapped)
            ._withUnsafeGuaranteedRef { try body($0.provider) }
    }

    /// Makes `list` the current one (called by the registry under its update lock).
    func publish(_ list: TypedProviders<Point.Provider>) {
        lists.withLock { held in
            guard held.lists.last !== list else { return }
            held.lists.append(list)
            let first = list.items.first.map(FirstProvider.init)
            if let first { held.firsts.append(first) }
            currentFirst.store(first.map { UInt(bitPattern: Unmanaged.passUnretained($0).toOpaque()) } ?? 0, ordering: .releasing)
            current.store(UInt(bitPattern: Unmanaged.passUnretained(list).toOpaque()), ordering: .releasing)
        }
    }

    /// How many lists this handle has held (for tests and memory reports).
    var listsHeld: Int { lists.withLock { $0.lists.count } }
}

/// One provider in a box of its own, so a reader can use it in place.
@usableFromInline
final class FirstProvider<Provider: Sendable>: Sendable {
    @usableFromInline let provider: Provider

    init(_ provider: Provider) { self.provider = provider }
}

/// Type-erased ``ProviderHandle``, for the registry's list of handles.
protocol AnyProviderHandle: AnyObject, Sendable {
    /// Pushes this handle's list from `snapshot`.
    func publish(from snapshot: RegistrySnapshot)
}

extension ProviderHandle: AnyProviderHandle {
    func publish(from snapshot: RegistrySnapshot) {
        guard let list = snapshot.providers(of: ObjectIdentifier(Point.self)) else { return }
        // The list for this key was built by DeclaredExtensionPoint<Point>.
        publish(unsafeDowncast(list, to: TypedProviders<Point.Provider>.self))
    }
}
