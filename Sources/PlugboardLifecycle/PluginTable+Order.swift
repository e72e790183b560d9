extension PluginTable {
    /// `pluginIDs` with every available plugin they require, transitively,
    /// in activation order: each after what it requires, and otherwise in
    /// file-name order (the order plugins always activated in).
    func activationOrder(_ pluginIDs: Set<String>) -> [String] {
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
        var placed = Set<String>(), onPath = Set<String>()
        // Depth first, each after what it requires; iterative, so a long
        // chain of requirements cannot run the thread out of stack.
        var path: [(id: String, requirements: [String], next: Int)] = []
        func enter(_ id: String) {
            guard !placed.contains(id), onPath.insert(id).inserted else { return }
            let requirements = (available[id]?.plugin.dependencies ?? []).map(\.id).filter { wanted.contains($0) }.sorted(by: byFileName)
            path.append((id, requirements, 0))
        }
        for id in wanted.sorted(by: byFileName) {
            enter(id)
            while let top = path.last {
                if top.next < top.requirements.count {
                    path[path.count - 1].next += 1
                    enter(top.requirements[top.next])
                    continue
                }
                path.removeLast()
                onPath.remove(top.id)
                placed.insert(top.id)
                order.append(top.id)
            }
        }
        return order
    }
}
