import Plugboard
import PlugboardCore
import PlugboardAdmission

extension Catalog {
    /// Checks what each newly examined plugin requires, before any plugin
    /// code runs: against the plugins examined with it and those this host
    /// already has. A plugin whose required dependency is missing, out of
    /// range, in a cycle with it, or not usable is refused with its own
    /// code, and so are the plugins that require it in turn. Checks and
    /// orders; never searches (one version per id, as installed).
    func settleDependencies(_ examined: inout [Examined], against table: Known) {
        // The usual case: nothing examined here requires anything, so
        // nothing can be refused for it (this cost a warm start 18,000
        // instructions per plugin: the maps below, built for nothing).
        guard examined.contains(where: { !($0.available?.plugin.dependencies.isEmpty ?? true) }) else { return }
        let known = table.records.filter { $0.status == .active || $0.status == .available }
        // Every plugin by id: the usable ones (available now or kept), and
        // the others with why they are not.
        var usable: [String: SemanticVersion] = [:]
        for record in known { if let id = record.id, let version = record.version { usable[id] = version } }
        var unusable: [String: PluginRecord] = [:]
        for item in examined {
            guard let id = item.record.id else { continue }
            if let available = item.available {
                usable[id] = available.plugin.semanticVersion
            } else if usable[id] == nil {
                unusable[id] = item.record
            }
        }
        // Each range parsed once. A refusal may refuse others in turn: the
        // plugins that require a refused one are checked again, until none is.
        let ranges = examined.map { item in item.available?.plugin.dependencies.map { VersionRange($0.range) } ?? [] }
        var requiredBy: [String: [Int]] = [:]
        for index in examined.indices {
            for requirement in examined[index].available?.plugin.dependencies ?? [] where !requirement.optional {
                requiredBy[requirement.id, default: []].append(index)
            }
        }
        var pending = Array(examined.indices.reversed())
        while let index = pending.popLast() {
            guard let plugin = examined[index].available?.plugin else { continue }
            if let error = problem(of: plugin, ranges: ranges[index], path: examined[index].record.path, usable: usable, unusable: unusable) {
                examined[index].record.fail(error)
                examined[index].available = nil
                usable[plugin.id] = nil
                unusable[plugin.id] = examined[index].record
                pending += requiredBy[plugin.id] ?? []
            }
        }
        let cycles = Self.cycles(in: examined.compactMap(\.available?.plugin))
        guard !cycles.isEmpty else { return }
        // Each member found by its id: as many cycles as plugins stay linear.
        var indexOf: [String: Int] = [:]
        for index in examined.indices { if let id = examined[index].available?.plugin.id, indexOf[id] == nil { indexOf[id] = index } }
        for cycle in cycles {
            for id in cycle {
                guard let index = indexOf[id] else { continue }
                examined[index].record.fail(.dependency(.dependencyCycle, path: examined[index].record.path, id: id,
                    reason: Self.cycleReason(cycle, member: id)))
                examined[index].available = nil
            }
        }
    }

    /// Cycles up to this long are shown whole in each member's reason;
    /// longer ones only in their first member's, so the text of a cycle
    /// grows with its length, not its square.
    static let cycleShownWhole = 8

    /// Why `member` of `cycle` (ids in order, smallest first) is refused.
    static func cycleReason(_ cycle: [String], member: String) -> String {
        let fix = "none of them can start before the others. Make one of the requirements optional, or move what they share into a plugin each requires"
        guard cycle.count <= cycleShownWhole || member == cycle[0] else {
            return "is in a cycle of \(cycle.count) required plugins, shown whole on \(cycle[0]); \(fix)"
        }
        return "is in a cycle of required plugins: \((cycle + [cycle[0]]).joined(separator: " → ")); \(fix)"
    }

    /// Why `plugin` cannot be available, if it cannot.
    private func problem(
        of plugin: ScannedPlugin, ranges: [VersionRange?], path: String, usable: [String: SemanticVersion], unusable: [String: PluginRecord]
    ) -> PluginLoadError? {
        for (requirement, range) in zip(plugin.dependencies, ranges) where !requirement.optional {
            // Checked when the descriptor was read.
            guard let range else { continue }
            if let version = usable[requirement.id] {
                guard range.contains(version) else {
                    return .dependencyVersion(path: path, id: plugin.id, requirement: requirement, found: version)
                }
                continue
            }
            guard let other = unusable[requirement.id] else {
                return .dependency(.dependencyMissing, path: path, id: plugin.id,
                    reason: "requires plugin \(requirement.id) \(requirement.range), which is not installed; put it in the plugins directory, or make the requirement optional")
            }
            let (code, what): (PluginLoadError.Code, String) = switch other.status {
            case .quarantined: (.dependencyQuarantined, "quarantined")
            case .disabled: (.dependencyDisabled, "disabled")
            default: (.dependencyRejected, other.status.rawValue)
            }
            let file = other.path.split(separator: "/").last.map(String.init) ?? other.path
            return .dependency(code, path: path, id: plugin.id,
                reason: "requires plugin \(requirement.id), which is \(what) (\(file): \(other.error?.code.rawValue ?? "?")); fix \(requirement.id) first")
        }
        return nil
    }

    /// The cycles among `plugins`' required dependencies, each as ids in
    /// order, smallest id first (Tarjan's strongly connected components, on
    /// indices: it runs at every discovery).
    static func cycles(in plugins: [ScannedPlugin]) -> [[String]] {
        var indexOf: [String: Int] = [:]
        for (index, plugin) in plugins.enumerated() where indexOf[plugin.id] == nil { indexOf[plugin.id] = index }
        let ids = plugins.map(\.id)
        // Required edges to plugins in the set, in id order.
        let edges: [[Int]] = plugins.map { plugin in
            plugin.dependencies.compactMap { $0.optional ? nil : indexOf[$0.id] }.sorted { ids[$0] < ids[$1] }
        }
        var counter = 0, stack: [Int] = []
        var onStack = [Bool](repeating: false, count: plugins.count)
        var order = [Int](repeating: -1, count: plugins.count), lowest = [Int](repeating: 0, count: plugins.count)
        var found: [[String]] = []
        func enter(_ node: Int) {
            order[node] = counter
            lowest[node] = counter
            counter += 1
            stack.append(node)
            onStack[node] = true
        }
        // Iterative, not recursive: a chain of thousands of plugins (a bad
        // input) must not run the discovering thread out of stack.
        for root in indexOf.values.sorted(by: { ids[$0] < ids[$1] }) where order[root] < 0 {
            enter(root)
            var path: [(node: Int, nextEdge: Int)] = [(root, 0)]
            while let (node, nextEdge) = path.last {
                if nextEdge < edges[node].count {
                    path[path.count - 1].nextEdge += 1
                    let next = edges[node][nextEdge]
                    if order[next] < 0 {
                        enter(next)
                        path.append((next, 0))
                    } else if onStack[next] {
                        lowest[node] = min(lowest[node], order[next])
                    }
                    continue
                }
                path.removeLast()
                if let parent = path.last?.node { lowest[parent] = min(lowest[parent], lowest[node]) }
                guard lowest[node] == order[node] else { continue }
                var component: [String] = []
                while let top = stack.popLast() {
                    onStack[top] = false
                    component.append(ids[top])
                    if top == node { break }
                }
                if component.count > 1 || edges[node].contains(node) {
                    found.append(Self.ordered(cycle: component) { id in indexOf[id].map { edges[$0].map { ids[$0] } } ?? [] })
                }
            }
        }
        return found
    }

    /// A component's members along its edges, from its smallest id.
    private static func ordered(cycle members: [String], edges: (String) -> [String]) -> [String] {
        let set = Set(members)
        var path = [members.min()!]
        var onPath: Set = [path[0]]
        while path.count < members.count, let next = edges(path.last!).first(where: { set.contains($0) && !onPath.contains($0) }) {
            path.append(next)
            onPath.insert(next)
        }
        return path.count == members.count ? path : members.sorted()
    }
}
