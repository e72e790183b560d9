import Plugboard

extension Catalog {
    /// Checks what each newly examined plugin requires, before any plugin
    /// code runs: against the plugins examined with it and those this host
    /// already has. A plugin whose required dependency is missing, out of
    /// range, in a cycle with it, or not usable is refused with its own
    /// code, and so are the plugins that require it in turn. Checks and
    /// orders; never searches (one version per id, as installed).
    func settleDependencies(_ examined: inout [Examined]) {
        let known = state.withLock { state in
            state.records.filter { $0.status == .active || $0.status == .available }
        }
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
        // A refusal may refuse others in turn: repeat until nothing changes.
        var changed = true
        while changed {
            changed = false
            for index in examined.indices {
                guard let plugin = examined[index].available?.plugin else { continue }
                if let error = problem(of: plugin, path: examined[index].record.path, usable: usable, unusable: unusable) {
                    examined[index].record.fail(error)
                    examined[index].available = nil
                    usable[plugin.id] = nil
                    unusable[plugin.id] = examined[index].record
                    changed = true
                }
            }
        }
        for cycle in Self.cycles(in: examined.compactMap(\.available?.plugin)) {
            let shown = (cycle + [cycle[0]]).joined(separator: " → ")
            for index in examined.indices where cycle.contains(examined[index].available?.plugin.id ?? "") {
                let id = examined[index].available!.plugin.id
                examined[index].record.fail(.dependency(.dependencyCycle, path: examined[index].record.path, id: id,
                    reason: "is in a cycle of required plugins: \(shown); none of them can start before the others. Make one of the requirements optional, or move what they share into a plugin each requires"))
                examined[index].available = nil
            }
        }
    }

    /// Why `plugin` cannot be available, if it cannot.
    private func problem(
        of plugin: ScannedPlugin, path: String, usable: [String: SemanticVersion], unusable: [String: PluginRecord]
    ) -> PluginLoadError? {
        for requirement in plugin.dependencies where !requirement.optional {
            // Parsed when the descriptor was read.
            guard let range = VersionRange(requirement.range) else { continue }
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
    /// order, smallest id first (Tarjan's strongly connected components).
    static func cycles(in plugins: [ScannedPlugin]) -> [[String]] {
        let byID = Dictionary(plugins.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        func edges(_ id: String) -> [String] {
            (byID[id]?.dependencies ?? []).filter { !$0.optional && byID[$0.id] != nil }.map(\.id).sorted()
        }
        var index = 0, stack: [String] = [], onStack: Set<String> = []
        var indices: [String: Int] = [:], lowest: [String: Int] = [:]
        var found: [[String]] = []
        func visit(_ id: String) {
            indices[id] = index
            lowest[id] = index
            index += 1
            stack.append(id)
            onStack.insert(id)
            for next in edges(id) {
                if indices[next] == nil {
                    visit(next)
                    lowest[id] = min(lowest[id]!, lowest[next]!)
                } else if onStack.contains(next) {
                    lowest[id] = min(lowest[id]!, indices[next]!)
                }
            }
            guard lowest[id] == indices[id] else { return }
            var component: [String] = []
            while let top = stack.popLast() {
                onStack.remove(top)
                component.append(top)
                if top == id { break }
            }
            if component.count > 1 || edges(id).contains(id) { found.append(Self.ordered(cycle: component, edges: edges)) }
        }
        for id in byID.keys.sorted() where indices[id] == nil { visit(id) }
        return found
    }

    /// A component's members along its edges, from its smallest id.
    private static func ordered(cycle members: [String], edges: (String) -> [String]) -> [String] {
        let set = Set(members)
        var path = [members.min()!]
        while path.count < members.count, let next = edges(path.last!).first(where: { set.contains($0) && !path.contains($0) }) {
            path.append(next)
        }
        return path.count == members.count ? path : members.sorted()
    }

    /// `pluginIDs` with every available plugin they require, transitively,
    /// in activation order: each after what it requires, and otherwise in
    /// file-name order (the order plugins always activated in).
    func activationOrder(_ pluginIDs: Set<String>) -> [String] {
        let (available, records) = state.withLock { ($0.available, $0.records) }
        var rank: [String: Int] = [:]
        for (index, record) in records.enumerated() { if let id = record.id, rank[id] == nil { rank[id] = index } }
        func byFileName(_ a: String, _ b: String) -> Bool { (rank[a] ?? .max, a) < (rank[b] ?? .max, b) }
        var wanted = Set<String>()
        var queue = Array(pluginIDs)
        while let id = queue.popLast() {
            guard wanted.insert(id).inserted, let plugin = available[id]?.plugin else { continue }
            queue += plugin.dependencies.map(\.id).filter { available[$0] != nil }
        }
        var order: [String] = []
        var placed = Set<String>()
        func place(_ id: String, _ path: Set<String>) {
            guard !placed.contains(id), !path.contains(id) else { return }
            for required in (available[id]?.plugin.dependencies ?? []).map(\.id).sorted(by: byFileName) where wanted.contains(required) {
                place(required, path.union([id]))
            }
            placed.insert(id)
            order.append(id)
        }
        for id in wanted.sorted(by: byFileName) { place(id, []) }
        return order
    }
}
