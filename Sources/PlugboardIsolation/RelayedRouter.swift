import Plugboard
import Synchronization
import PlugboardServices

/// An isolated plugin's router, in its child: each registration is the
/// host's to accept (its table holds every plugin's routes and decides
/// conflicts), and the handlers stay here, where the host's calls for the
/// route run them (``IsolatedChild``).
///
/// Only routes registered with ``Router/serve(_:_:)`` answer across: their
/// requests and responses are plain values. Following routes from inside
/// an isolated plugin is not offered: any other plugin's destination is an
/// object in the host's process.
final class RelayedRouter: Router {
    private let host: HostRelay.Asker
    private let handlers = Mutex<[String: @Sendable (RouteMatch) throws -> any Sendable]>([:])

    init(host: HostRelay.Asker) {
        self.host = host
    }

    func register(_ pattern: String, _ handler: @escaping @Sendable (RouteMatch) throws -> any Sendable) throws(ServiceError) {
        _ = try RouteTable.segments(of: pattern)
        guard let answer = host.ask(.route, pattern) else {
            throw ServiceError(.serviceUnavailable, "the host did not answer the registration of route '\(pattern)'", path: pattern)
        }
        if let error = answer.error { throw error }
        handlers.withLock { $0[pattern] = handler }
    }

    func navigate(to path: String) throws(ServiceError) -> any Sendable {
        throw ServiceError(
            .serviceUnavailable,
            "this plugin runs isolated: it serves routes (Router.serve) but cannot follow them, since destinations are objects in the host's process; ask the host through an extension point instead",
            path: path)
    }

    /// The handler registered for `pattern`, for a call of the host.
    func handler(for pattern: String) -> (@Sendable (RouteMatch) throws -> any Sendable)? {
        handlers.withLock { $0[pattern] }
    }
}
