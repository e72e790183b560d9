import Plugboard

/// An extension point the host declared, with its Swift type erased so the
/// registry can check and store providers of any point.
package struct DeclaredExtensionPoint: Sendable {
    package let interface: Interface
    /// The provider type's qualified name, for messages.
    package let providerTypeName: String
    let pointType: ObjectIdentifier
    /// Whether a provider has the point's provider type (one dynamic cast).
    package let accepts: @Sendable (any Sendable) -> Bool
    /// Builds the typed array readers get, so reads need no casts.
    let makeTypedProviders: @Sendable ([RegisteredProvider], _ pending: Bool) -> any TypedProviderList

    package init<Point: ExtensionPoint>(_ point: Point.Type) {
        interface = Point.interface
        // What `String(reflecting:)` prints for a type, without its three
        // conformance lookups (a scan of every image's conformances each, a
        // tenth of a warm `plugboard list` of one plugin).
        providerTypeName = _typeName(Point.Provider.self, qualified: true)
        pointType = ObjectIdentifier(point)
        accepts = { $0 is Point.Provider }
        makeTypedProviders = { providers, pending in
            TypedProviders<Point.Provider>(
                providers.compactMap { $0.provider as? Point.Provider }, pending: pending,
                origin: providers.map { ProviderOrigin(pluginID: $0.pluginID, generation: $0.generation) })
        }
    }
}

/// Type-erased ``TypedProviders``.
@usableFromInline
protocol TypedProviderList: AnyObject, Sendable {
    var pending: Bool { get }
    var origin: [ProviderOrigin] { get }
}

/// Which plugin generation a provider came from: two lists with the same
/// origins and pending flag hold the same providers.
@usableFromInline
struct ProviderOrigin: Sendable, Equatable {
    let pluginID: String
    let generation: Int
}

/// The providers of one extension point, already cast to its provider type.
/// Sendable as it is: every stored property is an immutable Sendable value.
@usableFromInline
final class TypedProviders<Provider: Sendable>: TypedProviderList, Sendable {
    @usableFromInline let items: [Provider]
    /// Available plugins provide this point but are not active yet: the
    /// first reader activates them (one load and branch on the read path).
    @usableFromInline let pending: Bool
    @usableFromInline let origin: [ProviderOrigin]
    init(_ items: [Provider], pending: Bool, origin: [ProviderOrigin]) {
        self.items = items
        self.pending = pending
        self.origin = origin
    }
}
