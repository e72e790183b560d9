import Plugboard

/// An extension point the host declared, with its Swift type erased so the
/// registry can check and store providers of any point.
struct DeclaredExtensionPoint: Sendable {
    let interface: Interface
    /// `String(reflecting:)` of the provider type, for messages.
    let providerTypeName: String
    let pointType: ObjectIdentifier
    /// Whether a provider has the point's provider type (one dynamic cast).
    let accepts: @Sendable (any Sendable) -> Bool
    /// Builds the typed array readers get, so reads need no casts.
    let makeTypedProviders: @Sendable ([any Sendable], _ pending: Bool) -> any TypedProviderList

    init<Point: ExtensionPoint>(_ point: Point.Type) {
        interface = Point.interface
        providerTypeName = String(reflecting: Point.Provider.self)
        pointType = ObjectIdentifier(point)
        accepts = { $0 is Point.Provider }
        makeTypedProviders = { providers, pending in
            TypedProviders<Point.Provider>(providers.compactMap { $0 as? Point.Provider }, pending: pending)
        }
    }
}

/// Type-erased ``TypedProviders``.
protocol TypedProviderList: AnyObject, Sendable {}

/// The providers of one extension point, already cast to its provider type.
final class TypedProviders<Provider: Sendable>: TypedProviderList {
    let items: [Provider]
    /// Available plugins provide this point but are not active yet: the
    /// first reader activates them (one load and branch on the read path).
    let pending: Bool
    init(_ items: [Provider], pending: Bool) {
        self.items = items
        self.pending = pending
    }
}
