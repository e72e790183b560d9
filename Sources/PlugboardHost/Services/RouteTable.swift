import Plugboard
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Every route of every plugin (one table per host), as a trie of path
/// segments: lookup cost grows with the path's length, not the number of
/// routes. Literal segments are tried before captures.
final class RouteTable: Sendable {
    private final class Node: @unchecked Sendable {
        // @unchecked: nodes are only touched with `RouteTable.root`'s mutex held.
        private(set) var literals: [String: Node] = [:]
        /// The same children as a list while there are few: comparing a few
        /// short byte strings costs less than hashing one.
        private var fewLiterals: [(bytes: [UInt8], node: Node)]? = []
        /// Child for a `{capture}` segment (its name lives in each route).
        var capture: Node?
        /// Registrations of this pattern: the last is live. Only generations
        /// of one plugin stack here (a new one shadows the old until the
        /// reload commits or rolls back).
        var routes: [Route] = []

        /// The child for the literal `segment` (UTF-8 bytes of the path).
        func literal(_ segment: UnsafeBufferPointer<UInt8>) -> Node? {
            if let few = fewLiterals {
                for entry in few where entry.bytes.count == segment.count {
                    let equal = entry.bytes.withUnsafeBufferPointer { memcmp($0.baseAddress!, segment.baseAddress!, segment.count) == 0 }
                    if equal { return entry.node }
                }
                return nil
            }
            return literals[String(decoding: segment, as: UTF8.self)]
        }

        func addLiteral(_ segment: String) -> Node {
            if let existing = literals[segment] { return existing }
            let next = Node()
            literals[segment] = next
            fewLiterals = literals.count <= 8 ? literals.map { (Array($0.key.utf8), $0.value) } : nil
            return next
        }
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
    /// How many are staged: matching reads the set only while one is.
    private let stagedCount = Atomic<Int>(0)

    func stage(_ owner: ServiceOwner) {
        staged.withLock { staged in
            staged.insert(owner)
            stagedCount.store(staged.count, ordering: .releasing)
        }
    }

    func unstage(_ owner: ServiceOwner) {
        staged.withLock { staged in
            staged.remove(owner)
            stagedCount.store(staged.count, ordering: .releasing)
        }
    }

    /// In one step: routes of `old` go, those of staged `new` answer.
    func switchOver(from old: ServiceOwner, to new: ServiceOwner) {
        root.withLock { root in
            Self.remove(old, from: root)
            staged.withLock { staged in
                staged.remove(new)
                stagedCount.store(staged.count, ordering: .releasing)
            }
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
                } else {
                    node = node.addLiteral(segment)
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
    ///
    /// Works on the path's UTF-8 bytes: segments are byte ranges, literals
    /// are compared as bytes, and only captured values become strings
    /// (Swift's `split` on a `String` walks characters, and cost more than
    /// the rest of the match).
    func match(_ path: String) -> (Route, RouteMatch)? {
        // Plugins activated by this path register their routes first.
        triggers.beforeRoute(path)
        var contiguous = path
        return contiguous.withUTF8 { bytes in
            var segments: [Range<Int>] = []
            segments.reserveCapacity(8)
            var start = 0
            for index in 0...bytes.count where index == bytes.count || bytes[index] == UInt8(ascii: "/") {
                if index > start { segments.append(start..<index) }
                start = index + 1
            }
            return root.withLock { root -> (Route, RouteMatch)? in
                let held = stagedCount.load(ordering: .acquiring) == 0 ? nil : staged.withLock { $0 }
                var captures: [Range<Int>] = []
                guard let route = Self.find(bytes, segments, 0, in: root, skipping: held, &captures) else { return nil }
                let values = captures.map { String(decoding: UnsafeBufferPointer(rebasing: bytes[$0]), as: UTF8.self) }
                return (route, RouteMatch(path: path, pattern: route.pattern, parameterNames: route.captureNames, parameterValues: values))
            }
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

    /// Depth first, literal before capture at each segment: the first route
    /// found is the one whose leftmost differing segment is a literal.
    private static func find(
        _ bytes: UnsafeBufferPointer<UInt8>, _ segments: [Range<Int>], _ index: Int, in node: Node,
        skipping staged: Set<ServiceOwner>?, _ captures: inout [Range<Int>]
    ) -> Route? {
        guard index < segments.count else {
            guard let staged else { return node.routes.last }
            return node.routes.last { !staged.contains($0.owner) }
        }
        let segment = segments[index]
        if let next = node.literal(UnsafeBufferPointer(rebasing: bytes[segment])),
           let route = find(bytes, segments, index + 1, in: next, skipping: staged, &captures) {
            return route
        }
        if let capture = node.capture {
            captures.append(segment)
            if let route = find(bytes, segments, index + 1, in: capture, skipping: staged, &captures) { return route }
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
            report(HostDiagnostic(.error, code: .init(error.code.rawValue), message: error.description, plugin: owner.pluginID))
            throw error
        }
    }

    func navigate(to path: String) throws(ServiceError) -> any Sendable {
        try table.navigate(to: path)
    }
}
