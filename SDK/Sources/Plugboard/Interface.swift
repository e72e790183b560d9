/// An interface a host offers and plugins provide: an id and a semantic version.
///
/// The id is reverse-DNS (`"plugboard.command"`). The version follows the rule
/// the host applies to every provider: equal majors, and the provider's minor no
/// greater than the host's (for `0.x`, equal minors). See
/// docs/compatibility.md, "Interface versions".
public struct Interface: Sendable, Hashable, CustomStringConvertible {
    /// Reverse-DNS id, such as `plugboard.command`.
    public let id: String
    /// The interface's version.
    public let version: SemanticVersion

    /// An interface `id` at `version`.
    public init(id: String, version: SemanticVersion) {
        self.id = id
        self.version = version
    }

    public var description: String { "\(id) \(version)" }
}

/// A typed extension point: an ``Interface`` paired with the Swift type its
/// providers have.
///
/// Declare one per interface, with the version written in an
/// `@_alwaysEmitIntoClient` property so that a plugin records the version it
/// was *compiled* against, not the one the host happens to have:
///
/// ```swift
/// public enum Commands: ExtensionPoint {
///     public typealias Provider = any Command
///     @_alwaysEmitIntoClient
///     public static var interface: Interface { Interface(id: "plugboard.command", version: SemanticVersion(1, 0)) }
/// }
/// ```
///
/// The provider type must be defined in a module that host and plugins load
/// from one shared dynamic library (the SDK, or a host's own interface package
/// built as a `.dynamic` product); otherwise casts across the boundary fail.
public protocol ExtensionPoint {
    /// The type the host receives for each provider, usually `any SomeProtocol`.
    associatedtype Provider: Sendable
    /// The interface id and version.
    static var interface: Interface { get }
}
