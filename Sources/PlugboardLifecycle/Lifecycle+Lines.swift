/// A change (a reload, a retirement, a cascade) holds the lines of the
/// plugins it touches, so that the starts it affects wait for it and see
/// the table it leaves, while unrelated starts go on.
extension Lifecycle {
    /// Runs `body`, a change to `pluginIDs` and to the live plugins that
    /// require them (transitively), holding their lines. A start under way
    /// of a plugin that requires one of them ends first, so it is among the
    /// dependents `body` finds; a start that needs one of them waits for
    /// `body`. Inside ``changes``: a line held for a change is this
    /// change's own (changes run one at a time), so a nested change (a
    /// quarantine's cascade during a reload) does not wait for itself.
    func holdingLines<Result>(of pluginIDs: Set<String>, _ body: () -> Result) -> Result {
        var held: [String: PluginLine] = [:]
        var covered = Set<String>()
        while true {
            var affected = pluginIDs
            for id in pluginIDs { affected.formUnion(dependents(of: id).map(\.id)) }
            for id in affected.subtracting(covered).sorted() {
                covered.insert(id)
                if let line = takeLine(id) { held[id] = line }
            }
            let starting = table.withLock { table in
                table.lines.filter { !covered.contains($0.key) && $0.value.startRequiring(anyOf: covered) }.map(\.value)
            }
            guard !starting.isEmpty else { break }
            // Started meanwhile: now live, they are dependents the next round takes.
            for line in starting { line.wait() }
        }
        defer {
            table.withLock { table in for (id, line) in held { table.dropLine(of: id, line) } }
            for line in held.values { line.release() }
        }
        return body()
    }

    /// Takes plugin `id`'s line for the change, after the start holding it
    /// ends; nil when this change holds it already.
    private func takeLine(_ id: String) -> PluginLine? {
        while true {
            let (taken, held) = table.withLock { $0.takeLine(forChanging: id) }
            if let taken { return taken }
            guard let held, case .start = held.holder else { return nil }
            held.wait()
        }
    }
}
