import PlugboardCore
import PlugboardCatalog

/// The table's side of the start lines (``PluginLine``): a start takes a
/// plugin and its line in one change, so nobody sees one without the other.
extension PluginTable {
    /// What a start of plugin `id` does next.
    enum StartStep {
        /// Start it: it was taken (available → starting) with its line.
        case start(AvailablePlugin, PluginLine)
        /// Wait for this line (of the plugin, or of a plugin it requires), then ask again.
        case wait(PluginLine, for: String)
        /// Nothing to start: active, failed, gone or never known.
        case skip
        /// The host shut down.
        case closed
    }

    /// The next step of a start of `id`, taking it when it may start now:
    /// nobody else holds its line or the line of a plugin it requires.
    mutating func nextStep(starting id: String) -> StartStep {
        if closed || closing { return .closed }
        if let line = lines[id] { return .wait(line, for: id) }
        guard let plugin = available[id] else { return .skip }
        for requirement in plugin.plugin.dependencies {
            if let line = lines[requirement.id] { return .wait(line, for: requirement.id) }
        }
        _ = take([id])
        let line = PluginLine(.start(
            requires: Set(plugin.plugin.dependencies.map(\.id)),
            provides: Set(plugin.plugin.provides.map(\.interface))))
        lines[id] = line
        return .start(plugin, line)
    }

    /// The ids of plugins being started now that provide `interfaceID`.
    func startingIDs(providing interfaceID: String) -> Set<String> {
        Set(lines.filter { $0.value.startProviding(interfaceID) }.keys)
    }

    /// Takes the line of `id` for a change, or the line held now to wait for.
    mutating func takeLine(forChanging id: String) -> (taken: PluginLine?, held: PluginLine?) {
        if let held = lines[id] { return (nil, held) }
        let line = PluginLine(.change)
        lines[id] = line
        return (line, nil)
    }

    /// Gives the line of `id` back (the caller then releases it).
    mutating func dropLine(of id: String, _ line: PluginLine) {
        if lines[id] === line { lines[id] = nil }
    }
}
