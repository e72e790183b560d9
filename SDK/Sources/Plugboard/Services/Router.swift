/// Navigation by path: plugins register destinations under path patterns and
/// anyone navigates by path, without importing the plugin that handles it.
///
/// Patterns are `/`-separated segments; `{name}` captures one segment:
/// `/restaurants/{id}`. A literal segment beats a capture
/// (`/restaurants/new` before `/restaurants/{id}`). A pattern belongs to the
/// first plugin that registers it (plugins activate in file-name order); a
/// later registration of the same pattern throws ``ServiceError/Code/routeConflict``.
///
/// A destination is whatever the handler returns: the host and the plugins
/// agree on its type through an interface package they share (the demo's
/// screens use `RenderedSection`), and ``navigate(to:as:)`` checks it.
public protocol Router: Sendable {
    /// Registers `pattern` for the calling plugin.
    func register(_ pattern: String, _ handler: @escaping @Sendable (RouteMatch) throws -> any Sendable) throws(ServiceError)
    /// The destination for `path`.
    func navigate(to path: String) throws(ServiceError) -> any Sendable
}

extension Router {
    /// The destination for `path`, as `type`.
    ///
    /// - Throws: ``ServiceError`` with ``ServiceError/Code/routeDestinationType``
    ///   when the handler returned another type.
    public func navigate<Destination>(to path: String, as type: Destination.Type) throws(ServiceError) -> Destination {
        let destination = try navigate(to: path)
        guard let typed = destination as? Destination else {
            throw ServiceError(
                .routeDestinationType,
                "'\(path)' leads to a \(Swift.type(of: destination)), not a \(Destination.self); navigate with the type its handler returns",
                path: path)
        }
        return typed
    }
}

/// A path matched against a pattern.
public struct RouteMatch: Sendable, Equatable {
    /// The path navigated to.
    public let path: String
    /// The registered pattern it matched.
    public let pattern: String
    /// Names of the pattern's captures, in order (`["id"]` for `/restaurants/{id}`).
    public let parameterNames: [String]
    /// The captured segments, in the same order.
    public let parameterValues: [String]

    /// The segment captured by `{name}`, nil if the pattern has no such capture.
    /// A linear search: patterns have a few captures, and it builds nothing.
    public func parameter(_ name: String) -> String? {
        for index in parameterNames.indices where parameterNames[index] == name { return parameterValues[index] }
        return nil
    }

    /// Captured segments, by name (built on each access; ``parameter(_:)`` is cheaper).
    public var parameters: [String: String] {
        Dictionary(zip(parameterNames, parameterValues), uniquingKeysWith: { $1 })
    }

    /// Made by routers (a host's, or a test's).
    public init(path: String, pattern: String, parameterNames: [String], parameterValues: [String]) {
        self.path = path
        self.pattern = pattern
        self.parameterNames = parameterNames
        self.parameterValues = parameterValues
    }

    /// Made by routers (a host's, or a test's), from captures by name.
    public init(path: String, pattern: String, parameters: [String: String]) {
        let sorted = parameters.sorted { $0.key < $1.key }
        self.init(path: path, pattern: pattern, parameterNames: sorted.map(\.key), parameterValues: sorted.map(\.value))
    }
}
