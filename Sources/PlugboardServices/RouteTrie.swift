#if canImport(Glibc)
import Glibc
#endif

/// The route patterns of a ``RouteTable`` as a trie of path segments, laid
/// out so that a lookup touches no reference count: nodes and edges are
/// plain values in arrays and refer to each other by index, and literal
/// segments are bytes in one buffer.
///
/// Walking a trie of class instances cost a retain and a release per node
/// visited, and a node struct holding arrays or dictionaries cost one per
/// field each time it was read: half of a lookup (`perf`,
/// `PLUGBOARD_BENCH_ONLY=router`). Literal segments are tried before
/// captures. ``RouteTable`` changes it under its mutex and looks up in an
/// immutable copy.
struct RouteTrie: Sendable {
    /// One node: plain integers only.
    private struct Node {
        /// This node's first literal edge in `edges` (a list through
        /// `Edge.next`), -1 when it has none.
        var firstEdge: Int32 = -1
        var edgeCount: Int32 = 0
        /// The child for a `{capture}` segment, -1 when none.
        var capture: Int32 = -1
    }

    /// A literal segment from one node to another.
    private struct Edge {
        var next: Int32
        var child: Int32
        /// The segment's bytes: `text[start..<start + count]`.
        var start: Int32
        var count: Int32
    }

    private struct EdgeKey: Hashable {
        let parent: Int32
        let segment: String
    }

    /// A node's literal edges are compared byte by byte while there are at
    /// most this many; past it, one hash finds the child.
    private static let scanLimit: Int32 = 8

    private var nodes = [Node()]
    /// The most segments of any pattern: a match captures at most this many.
    private(set) var depth = 0
    private var edges: [Edge] = []
    private var text: [UInt8] = []
    /// Every literal edge by parent and segment: for registration, and for
    /// lookups at nodes with more than `scanLimit` literals.
    private var children: [EdgeKey: Int32] = [:]
    /// The routes registered at each node (the last is live), by node index.
    private var routes: [[RouteTable.Route]] = [[]]

    /// The node for `segments` (a pattern split at `/`; `{name}` segments
    /// are captures), made if missing.
    mutating func node(for segments: [String]) -> Int {
        depth = max(depth, segments.count)
        var node: Int32 = 0
        for segment in segments {
            node = segment.hasPrefix("{") ? captureChild(of: node) : literalChild(of: node, segment)
        }
        return Int(node)
    }

    /// The routes registered at `node` (the last is live).
    func routes(at node: Int) -> [RouteTable.Route] { routes[node] }

    mutating func append(_ route: RouteTable.Route, at node: Int) { routes[node].append(route) }

    /// Removes every route `owner` registered.
    mutating func removeAll(owner: ServiceOwner) {
        for index in routes.indices { routes[index].removeAll { $0.owner == owner } }
    }

    /// The live route of every node.
    var liveRoutes: [RouteTable.Route] { routes.compactMap(\.last) }

    private mutating func literalChild(of parent: Int32, _ segment: String) -> Int32 {
        let key = EdgeKey(parent: parent, segment: segment)
        if let existing = children[key] { return existing }
        let child = addNode()
        let bytes = Array(segment.utf8)
        edges.append(Edge(next: nodes[Int(parent)].firstEdge, child: child, start: Int32(text.count), count: Int32(bytes.count)))
        text.append(contentsOf: bytes)
        nodes[Int(parent)].firstEdge = Int32(edges.count - 1)
        nodes[Int(parent)].edgeCount += 1
        children[key] = child
        return child
    }

    private mutating func captureChild(of parent: Int32) -> Int32 {
        if nodes[Int(parent)].capture >= 0 { return nodes[Int(parent)].capture }
        let child = addNode()
        nodes[Int(parent)].capture = child
        return child
    }

    private mutating func addNode() -> Int32 {
        nodes.append(Node())
        routes.append([])
        return Int32(nodes.count - 1)
    }

    /// An immutable copy for lookups.
    func frozen() -> Frozen { Frozen(self) }

    /// An immutable copy of a trie, for lookups outside the table's mutex:
    /// the arrays of a class's `let` are read without reference counting,
    /// where those of the locked value cost a retain and a release each.
    final class Frozen: Sendable {
        private let nodes: [Node]
        private let edges: [Edge]
        private let text: [UInt8]
        private let children: [EdgeKey: Int32]
        private let routes: [[RouteTable.Route]]
        /// The most segments of any pattern (``RouteTrie/depth``).
        let depth: Int

        fileprivate init(_ trie: RouteTrie) {
            depth = trie.depth
            nodes = trie.nodes
            edges = trie.edges
            text = trie.text
            children = trie.children
            routes = trie.routes
        }

        /// The live route for `path` (its UTF-8 bytes), skipping routes of
        /// `staged` owners; `captures[0..<captured]` receives the captured
        /// byte ranges. `captures` needs room for ``depth`` ranges (a walk
        /// goes no deeper than the longest pattern).
        func find(
            _ path: UnsafeBufferPointer<UInt8>, skipping staged: Set<ServiceOwner>?,
            captures: UnsafeMutableBufferPointer<Range<Int>>, captured: inout Int
        ) -> RouteTable.Route? {
            find(path, from: 0, node: 0, staged, captures, &captured)
        }

        /// Depth first, literal before capture at each segment: the first
        /// route found is the one whose leftmost differing segment is a
        /// literal. Segments are read from the path as the walk goes (empty
        /// ones skipped).
        private func find(
            _ path: UnsafeBufferPointer<UInt8>, from position: Int, node: Int, _ staged: Set<ServiceOwner>?,
            _ captures: UnsafeMutableBufferPointer<Range<Int>>, _ captured: inout Int
        ) -> RouteTable.Route? {
            let slash = UInt8(ascii: "/")
            var start = position
            while start < path.count && path[start] == slash { start += 1 }
            guard start < path.count else {
                guard let staged else { return routes[node].last }
                return routes[node].last { !staged.contains($0.owner) }
            }
            var end = start + 1
            while end < path.count && path[end] != slash { end += 1 }
            let segment = UnsafeBufferPointer(rebasing: path[start..<end])
            let literal = child(of: node, segment)
            if literal >= 0, let route = find(path, from: end, node: Int(literal), staged, captures, &captured) {
                return route
            }
            let capture = nodes[node].capture
            if capture >= 0 {
                captures[captured] = start..<end
                captured += 1
                if let route = find(path, from: end, node: Int(capture), staged, captures, &captured) { return route }
                captured -= 1
            }
            return nil
        }

        /// The child of `node` for the literal `segment`, -1 when none.
        private func child(of node: Int, _ segment: UnsafeBufferPointer<UInt8>) -> Int32 {
            guard nodes[node].edgeCount <= RouteTrie.scanLimit else {
                return children[EdgeKey(parent: Int32(node), segment: String(decoding: segment, as: UTF8.self))] ?? -1
            }
            return text.withUnsafeBufferPointer { text in
                var edge = nodes[node].firstEdge
                while edge >= 0 {
                    let candidate = edges[Int(edge)]
                    if Int(candidate.count) == segment.count,
                       memcmp(text.baseAddress! + Int(candidate.start), segment.baseAddress!, segment.count) == 0 {
                        return candidate.child
                    }
                    edge = candidate.next
                }
                return -1
            }
        }
    }
}
