import Plugboard
import Synchronization
import PlugboardCore

/// Every route of every plugin (one table per host): registration,
/// matching, and the hand-over of a reloading plugin's routes. The patterns
/// live in a ``RouteTrie``: lookup cost grows with the path's length, not
/// the number of routes.
package final class RouteTable: Sendable {
    /// A registered pattern: a class, so that finding one costs one retain.
    package final class Route: Sendable {
        let pattern: String
        let owner: ServiceOwner
        /// Names of the pattern's captures, in order.
        let captureNames: [String]
        let handler: @Sendable (RouteMatch) throws -> any Sendable

        init(pattern: String, owner: ServiceOwner, captureNames: [String], handler: @escaping @Sendable (RouteMatch) throws -> any Sendable) {
            self.pattern = pattern
            self.owner = owner
            self.captureNames = captureNames
            self.handler = handler
        }
    }

    /// The patterns, and the copy lookups read.
    private struct Patterns {
        var trie = RouteTrie()
        /// An immutable copy of `trie`, made by the first lookup after a
        /// change: lookups walk it outside the mutex, and the arrays of a
        /// class's `let` are read without reference counting, where those of
        /// the locked value cost a retain and a release each per lookup.
        var published: RouteTrie.Frozen?
    }

    private let patterns = Mutex(Patterns())

    /// Runs `body` on the patterns; lookups see the change from then on.
    private func change<Result, Failure: Error>(_ body: (inout RouteTrie) throws(Failure) -> Result) throws(Failure) -> Result {
        try patterns.withLock { patterns throws(Failure) in
            patterns.published = nil
            return try body(&patterns.trie)
        }
    }

    /// The copy of the patterns for lookups, and the owners whose routes
    /// wait for a commit (nil when none), read together so that a lookup
    /// never sees a switch-over half done.
    private func lookupState() -> (RouteTrie.Frozen, Set<ServiceOwner>?) {
        patterns.withLock { patterns in
            let held = stagedCount.load(ordering: .acquiring) == 0 ? nil : staged.withLock { $0 }
            if let published = patterns.published { return (published, held) }
            let published = patterns.trie.frozen()
            patterns.published = published
            return (published, held)
        }
    }
    private let triggers: ActivationTriggers

    package init(triggers: ActivationTriggers = ActivationTriggers()) {
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
        change { trie in
            trie.removeAll(owner: old)
            staged.withLock { staged in
                staged.remove(new)
                stagedCount.store(staged.count, ordering: .releasing)
            }
        }
    }

    package func register(_ pattern: String, owner: ServiceOwner, handler: @escaping @Sendable (RouteMatch) throws -> any Sendable) throws(ServiceError) {
        let segments = try Self.segments(of: pattern)
        try change { trie throws(ServiceError) in
            // `/a/{id}` and `/a/{slug}` share a node: they are the same route.
            let node = trie.node(for: segments)
            if let existing = trie.routes(at: node).last, existing.owner.pluginID != owner.pluginID || existing.owner == owner {
                throw ServiceError(
                    .routeConflict,
                    "route '\(pattern)' is already registered by \(existing.owner.pluginID) (as '\(existing.pattern)'); the first registration wins, so register another pattern",
                    path: pattern)
            }
            let names = segments.filter { $0.hasPrefix("{") }.map { String($0.dropFirst().dropLast()) }
            trie.append(Route(pattern: pattern, owner: owner, captureNames: names, handler: handler), at: node)
        }
    }

    /// The route for `path` and its captures, without running the handler.
    ///
    /// Works on the path's UTF-8 bytes: segments are byte ranges, literals
    /// are compared as bytes, and only captured values become strings
    /// (Swift's `split` on a `String` walks characters, and cost more than
    /// the rest of the match).
    package func match(_ path: String, from caller: ServiceOwner? = nil) -> (Route, RouteMatch)? {
        // Plugins activated by this path register their routes first.
        triggers.beforeRoute(path, from: caller)
        let (published, held) = lookupState()
        var contiguous = path
        return contiguous.withUTF8 { bytes in
            // One capture per segment at most, and no more segments than the
            // longest pattern has: on the stack for any usual table.
            withUnsafeTemporaryAllocation(of: Range<Int>.self, capacity: max(1, published.depth)) { captures in
                var captured = 0
                guard let found = published.find(bytes, skipping: held, captures: captures, captured: &captured) else { return nil }
                let values = captures[0..<captured].map { String(decoding: UnsafeBufferPointer(rebasing: bytes[$0]), as: UTF8.self) }
                return (found, RouteMatch(path: path, pattern: found.pattern, parameterNames: found.captureNames, parameterValues: values))
            }
        }
    }

    func navigate(to path: String, from caller: ServiceOwner? = nil) throws(ServiceError) -> any Sendable {
        guard let (route, match) = match(path, from: caller) else {
            throw ServiceError(.routeNotFound, "no plugin handles '\(path)'", path: path)
        }
        do {
            return try route.handler(match)
        } catch {
            throw ServiceError(.routeHandlerFailed, "plugin \(route.owner.pluginID) failed to build '\(path)': \(error)", path: path)
        }
    }

    package func removeAll(owner: ServiceOwner) {
        change { $0.removeAll(owner: owner) }
    }

    /// Patterns with their owners, sorted.
    package var routes: [(pattern: String, owner: String)] {
        patterns.withLock { patterns in
            patterns.trie.liveRoutes.map { ($0.pattern, $0.owner.pluginID) }.sorted { $0.0 < $1.0 }
        }
    }

    package static func segments(of pattern: String) throws(ServiceError) -> [String] {
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
package struct PluginRouter: Router {
    let table: RouteTable
    let owner: ServiceOwner
    let report: @Sendable (HostDiagnostic) -> Void

    package init(table: RouteTable, owner: ServiceOwner, report: @escaping @Sendable (HostDiagnostic) -> Void) {
        self.table = table
        self.owner = owner
        self.report = report
    }

    package func register(_ pattern: String, _ handler: @escaping @Sendable (RouteMatch) throws -> any Sendable) throws(ServiceError) {
        do {
            try table.register(pattern, owner: owner, handler: handler)
        } catch {
            report(HostDiagnostic(.error, code: .init(error.code.rawValue), message: error.description, plugin: owner.pluginID))
            throw error
        }
    }

    package func navigate(to path: String) throws(ServiceError) -> any Sendable {
        try table.navigate(to: path, from: owner)
    }
}
