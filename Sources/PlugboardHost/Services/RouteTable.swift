import Plugboard
import Synchronization

/// Every route of every plugin (one table per host), as a trie of path
/// segments: lookup cost grows with the path's length, not the number of
/// routes. Literal segments are tried before captures.
final class RouteTable: Sendable {
    private final class Node: @unchecked Sendable {
        // @unchecked: nodes are only touched with `RouteTable.root`'s mutex held.
        var literals: [String: Node] = [:]
        /// Child for a `{capture}` segment (its name lives in each route).
        var capture: Node?
        /// Registrations of this pattern: the last is live. Only generations
        /// of one plugin stack here (a new one shadows the old until the
        /// reload commits or rolls back).
        var routes: [Route] = []
    }

    struct Route: Sendable {
        let pattern: String
        let owner: ServiceOwner
        /// Names of the pattern's captures, in order.
        let captureNames: [String]
        let handler: @Sendable (RouteMatch) throws -> any Sendable
    }

    private let root = Mutex(Node())
    private let triggers: ActivationTriggers

    init(triggers: ActivationTriggers = ActivationTriggers()) {
        self.triggers = triggers
    }
    /// Generations a reload is staging: their routes wait for the commit.
    private let staged = Mutex<Set<ServiceOwner>>([])

    func stage(_ owner: ServiceOwner) { staged.withLock { _ = $0.insert(owner) } }
    func unstage(_ owner: ServiceOwner) { staged.withLock { _ = $0.remove(owner) } }

    /// In one step: routes of `old` go, those of staged `new` answer.
    func switchOver(from old: ServiceOwner, to new: ServiceOwner) {
        root.withLock { root in
            Self.remove(old, from: root)
            staged.withLock { _ = $0.remove(new) }
        }
    }

    func register(_ pattern: String, owner: ServiceOwner, handler: @escaping @Sendable (RouteMatch) throws -> any Sendable) throws(ServiceError) {
        let segments = try Self.segments(of: pattern)
        try root.withLock { root throws(ServiceError) in
            var node = root
            for segment in segments {
                if segment.hasPrefix("{") {
                    // `/a/{id}` and `/a/{slug}` share a node: they are the same route.
                    if let capture = node.capture {
                        node = capture
                    } else {
                        let next = Node()
                        node.capture = next
                        node = next
                    }
                } else if let next = node.literals[segment] {
                    node = next
                } else {
                    let next = Node()
                    node.literals[segment] = next
                    node = next
                }
            }
            if let existing = node.routes.last, existing.owner.pluginID != owner.pluginID || existing.owner == owner {
                throw ServiceError(
                    .routeConflict,
                    "route '\(pattern)' is already registered by \(existing.owner.pluginID) (as '\(existing.pattern)'); the first registration wins, so register another pattern",
                    path: pattern)
            }
            let names = segments.filter { $0.hasPrefix("{") }.map { String($0.dropFirst().dropLast()) }
            node.routes.append(Route(pattern: pattern, owner: owner, captureNames: names, handler: handler))
        }
    }

    /// The route for `path` and its captures, without running the handler.
    func match(_ path: String) -> (Route, RouteMatch)? {
        // Plugins activated by this path register their routes first.
        triggers.beforeRoute(path)
        let segments = path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        return root.withLock { root in
            var captures: [String] = []
            let held = staged.withLock { $0 }
            guard let route = Self.find(segments[...], in: root, skipping: held, &captures) else { return nil }
            let parameters = Dictionary(zip(route.captureNames, captures), uniquingKeysWith: { $1 })
            return (route, RouteMatch(path: path, pattern: route.pattern, parameters: parameters))
        }
    }

    func navigate(to path: String) throws(ServiceError) -> any Sendable {
        guard let (route, match) = match(path) else {
            throw ServiceError(.routeNotFound, "no plugin handles '\(path)'", path: path)
        }
        do {
            return try route.handler(match)
        } catch {
            throw ServiceError(.routeHandlerFailed, "plugin \(route.owner.pluginID) failed to build '\(path)': \(error)", path: path)
        }
    }

    func removeAll(owner: ServiceOwner) {
        root.withLock { Self.remove(owner, from: $0) }
    }

    /// Patterns with their owners, sorted.
    var routes: [(pattern: String, owner: String)] {
        root.withLock { root in
            var out: [(String, String)] = []
            Self.collect(root, &out)
            return out.sorted { $0.0 < $1.0 }
        }
    }

    private static func find(
        _ segments: ArraySlice<String>, in node: Node, skipping staged: Set<ServiceOwner>, _ captures: inout [String]
    ) -> Route? {
        guard let segment = segments.first else { return node.routes.last { !staged.contains($0.owner) } }
        if let next = node.literals[segment], let route = find(segments.dropFirst(), in: next, skipping: staged, &captures) {
            return route
        }
        if let capture = node.capture {
            captures.append(segment)
            if let route = find(segments.dropFirst(), in: capture, skipping: staged, &captures) { return route }
            captures.removeLast()
        }
        return nil
    }

    private static func remove(_ owner: ServiceOwner, from node: Node) {
        node.routes.removeAll { $0.owner == owner }
        for next in node.literals.values { remove(owner, from: next) }
        if let capture = node.capture { remove(owner, from: capture) }
    }

    private static func collect(_ node: Node, _ out: inout [(String, String)]) {
        if let route = node.routes.last { out.append((route.pattern, route.owner.pluginID)) }
        for next in node.literals.values { collect(next, &out) }
        if let capture = node.capture { collect(capture, &out) }
    }

    static func segments(of pattern: String) throws(ServiceError) -> [String] {
        guard pattern.hasPrefix("/") else { throw invalidPattern(pattern, "must start with '/'") }
        let segments = pattern.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        var names: Set<String> = []
        for segment in segments {
            let opens = segment.filter { $0 == "{" }.count, closes = segment.filter { $0 == "}" }.count
            if opens == 0 && closes == 0 { continue }
            guard opens == 1, closes == 1, segment.hasPrefix("{"), segment.hasSuffix("}"), segment.count > 2 else {
                throw invalidPattern(pattern, "a capture must be a whole segment like {id}")
            }
            guard names.insert(segment).inserted else { throw invalidPattern(pattern, "capture \(segment) appears twice") }
        }
        return segments
    }

    private static func invalidPattern(_ pattern: String, _ reason: String) -> ServiceError {
        ServiceError(.routeInvalidPattern, "invalid route pattern '\(pattern)': \(reason)", path: pattern)
    }
}

/// The ``Router`` a plugin receives: the table, labelled with the plugin.
struct PluginRouter: Router {
    let table: RouteTable
    let owner: ServiceOwner
    let report: @Sendable (HostDiagnostic) -> Void

    func register(_ pattern: String, _ handler: @escaping @Sendable (RouteMatch) throws -> any Sendable) throws(ServiceError) {
        do {
            try table.register(pattern, owner: owner, handler: handler)
        } catch {
            report(HostDiagnostic(.error, code: error.code.rawValue, message: error.description, plugin: owner.pluginID))
            throw error
        }
    }

    func navigate(to path: String) throws(ServiceError) -> any Sendable {
        try table.navigate(to: path)
    }
}
