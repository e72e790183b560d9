/// One provider a plugin instance hands to the host for one extension point.
///
/// Return these from ``Plugin/contributions()``:
///
/// ```swift
/// func contributions() -> [Contribution] {
///     [.provider(GreetCommand(), for: Commands.self)]
/// }
/// ```
public struct Contribution: Sendable {
    /// The interface id this provider is for.
    public let interfaceID: String
    /// The provider; the host casts it to the extension point's `Provider` type.
    public let provider: any Sendable

    /// A provider for `point`, checked against the point's provider type when the
    /// plugin is compiled.
    public static func provider<Point: ExtensionPoint>(_ provider: Point.Provider, for point: Point.Type) -> Contribution {
        Contribution(interfaceID: point.interface.id, provider: provider)
    }

    /// A provider for an interface known only by id. The host still checks its type.
    public init(interfaceID: String, provider: any Sendable) {
        self.interfaceID = interfaceID
        self.provider = provider
    }
}
