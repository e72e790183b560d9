/// The destination of a route registered with ``Router/serve(_:_:)``: the
/// path's match and the handler that answers requests to it. (SDK 2.3)
///
/// Hosts rarely see one: ``Router/respond(to:)`` navigates and answers in
/// one step. An isolated plugin's routes reach the host as endpoints whose
/// handler calls the plugin's child process; their errors are
/// the host's `IsolatedCallError` (`plugin-crashed`, `plugin-timeout`), for the
/// host to turn into a 5xx.
public struct RouteEndpoint: Sendable {
    /// The path matched against the route's pattern.
    public let match: RouteMatch
    private let handler: @Sendable (RouteRequest) throws -> RouteResponse

    /// An endpoint for `match`, answered by `handler`.
    public init(match: RouteMatch, _ handler: @escaping @Sendable (RouteRequest) throws -> RouteResponse) {
        self.match = match
        self.handler = handler
    }

    /// Answers `request`, with the match's captures added to its parameters.
    public func respond(to request: RouteRequest) throws -> RouteResponse {
        var request = request
        for (name, value) in zip(match.parameterNames, match.parameterValues) { request.parameters[name] = value }
        return try handler(request)
    }
}

extension Router {
    /// Registers `pattern` for requests: `handler` answers each with a
    /// ``RouteResponse``. The same pattern rules and conflicts as
    /// ``register(_:_:)``; unlike it, such a route also works when the
    /// plugin runs isolated, in a child process. (SDK 2.3)
    ///
    /// ```swift
    /// try router.serve("/orders/{id}") { request in
    ///     RouteResponse(text: "order \(request.parameters["id"] ?? "")")
    /// }
    /// ```
    public func serve(_ pattern: String, _ handler: @escaping @Sendable (RouteRequest) throws -> RouteResponse) throws(ServiceError) {
        try register(pattern) { match in RouteEndpoint(match: match, handler) }
    }

    /// Answers `request` by the route its path matches. (SDK 2.3)
    ///
    /// - Throws: ``ServiceError`` (`route-not-found`, `route-destination-type`
    ///   when the route was registered with ``register(_:_:)``, not
    ///   ``serve(_:_:)``), or whatever the handler throws.
    public func respond(to request: RouteRequest) throws -> RouteResponse {
        try navigate(to: request.path, as: RouteEndpoint.self).respond(to: request)
    }
}
