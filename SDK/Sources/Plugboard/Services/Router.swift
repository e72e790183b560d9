/// Navigation by path: plugins register destinations under path patterns and
/// anyone navigates by path, without importing the plugin that handles it.
///
/// Patterns are `/`-separated segments; `{name}` captures one segment:
/// `/restaurants/{id}`. A literal segment beats a capture
/// (`/restaurants/new` before `/restaurants/{id}`). A pattern belongs to the
/// first plugin that registers it (plugins activate in file-name order); a
/// later registration of the same pattern throws ``RouteError/conflict(pattern:owner:)``.
public protocol Router: Sendable {
    /// Registers `pattern` for the calling plugin.
    func register(_ pattern: String, _ handler: @escaping @Sendable (RouteMatch) throws -> RenderedSection) throws(RouteError)
    /// The destination for `path`.
    func navigate(to path: String) throws(RouteError) -> RenderedSection
}

/// A path matched against a pattern.
public struct RouteMatch: Sendable, Equatable {
    public let path: String
    public let pattern: String
    /// Captured segments, by name.
    public let parameters: [String: String]

    public init(path: String, pattern: String, parameters: [String: String]) {
        self.path = path
        self.pattern = pattern
        self.parameters = parameters
    }
}

/// Why routing failed.
public enum RouteError: Error, Sendable, Equatable, CustomStringConvertible {
    case invalidPattern(String, reason: String)
    case conflict(pattern: String, owner: String)
    case notFound(path: String)
    case handlerFailed(path: String, plugin: String, error: String)

    public var code: String {
        switch self {
        case .invalidPattern: "route-invalid-pattern"
        case .conflict: "route-conflict"
        case .notFound: "route-not-found"
        case .handlerFailed: "route-handler-failed"
        }
    }

    public var description: String {
        switch self {
        case let .invalidPattern(pattern, reason): "invalid route pattern '\(pattern)': \(reason)"
        case let .conflict(pattern, owner): "route '\(pattern)' is already registered by \(owner); the first registration wins"
        case let .notFound(path): "no plugin handles '\(path)'"
        case let .handlerFailed(path, plugin, error): "plugin \(plugin) failed to build '\(path)': \(error)"
        }
    }
}
