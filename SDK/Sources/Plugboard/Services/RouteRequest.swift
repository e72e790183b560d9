/// A request to a route registered with ``Router/serve(_:_:)``: what an
/// HTTP server hands a handler, as plain values, so that it crosses to an
/// isolated plugin's child process unchanged. (SDK 2.3)
///
/// The host builds it from its server's request; ``Router/respond(to:)``
/// adds the route's captures to ``parameters``.
public struct RouteRequest: Codable, Sendable, Equatable {
    /// The method, such as `GET` or `POST`.
    public var method: String
    /// The path the router matches, without a query (`/orders/42`).
    public var path: String
    /// The route's captures (`id` for `/orders/{id}`), and whatever the host
    /// adds, such as the query's fields; a capture replaces a field of the
    /// same name.
    public var parameters: [String: String]
    /// The headers, in order; a name may repeat.
    public var headers: [RouteHeader]
    /// The body's bytes. Crossing to an isolated plugin, the whole request
    /// travels in one message of at most 64 MiB; a larger one is refused
    /// before the plugin sees it (`isolated-call-too-large`).
    public var body: [UInt8]

    /// A request for `path`.
    public init(method: String = "GET", path: String, parameters: [String: String] = [:], headers: [RouteHeader] = [], body: [UInt8] = []) {
        self.method = method
        self.path = path
        self.parameters = parameters
        self.headers = headers
        self.body = body
    }

    /// The first header named `name`, compared without case; nil if none.
    public func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return headers.first { $0.name.lowercased() == wanted }?.value
    }
}

/// One header of a ``RouteRequest`` or a ``RouteResponse``. (SDK 2.3)
public struct RouteHeader: Codable, Sendable, Hashable {
    /// Its name, as sent (`Content-Type`).
    public var name: String
    /// Its value.
    public var value: String

    /// A header `name: value`.
    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}
