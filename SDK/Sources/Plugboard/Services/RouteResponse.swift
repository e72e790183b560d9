/// What a route registered with ``Router/serve(_:_:)`` answers: an HTTP
/// response as plain values, so that it crosses back from an isolated
/// plugin's child process unchanged. (SDK 2.3)
public struct RouteResponse: Codable, Sendable, Equatable {
    /// The status code, such as 200 or 404.
    public var status: Int
    /// The headers, in order; a name may repeat.
    public var headers: [RouteHeader]
    /// The body's bytes. From an isolated plugin the whole response travels
    /// in one message of at most 64 MiB; a larger one fails the call
    /// (`isolated-call-too-large`) and the child lives on.
    public var body: [UInt8]

    /// A response with `status`.
    public init(status: Int = 200, headers: [RouteHeader] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A response whose body is `text` in UTF-8, labelled `text/plain`.
    public init(status: Int = 200, text: String) {
        self.init(status: status, headers: [RouteHeader("Content-Type", "text/plain; charset=utf-8")], body: Array(text.utf8))
    }
}
