import PlugboardCore

/// What ``PluginHost/refresh()`` found in the plugins directory and did.
public struct RefreshOutcome: Sendable {
    /// Files not known before, examined now (available, or refused with their reason).
    public let added: [PluginRecord]
    /// Active plugins whose file changed: each reloaded, with state handover,
    /// or still running its old generation with the reason.
    public let reloaded: [ReloadOutcome]
    /// Plugins whose file is gone: taken out of the registry and deactivated
    /// (calls already running finish on them).
    public let removed: [String]
    /// Available plugins whose file changed or went away: examined again on
    /// this refresh, or forgotten.
    public let reexamined: [String]
}

extension RefreshOutcome {
    /// One line saying what changed, as the watcher reports it.
    package var summary: String {
        var parts = added.map { "added \($0.id ?? $0.path) (\($0.status.rawValue))" }
        parts += reloaded.map { "reloaded \($0.pluginID)" + ($0.error.map { " failed: [\($0.code.rawValue)] \($0.reason)" } ?? "") }
        parts += removed.map { "removed \($0)" }
        return parts.isEmpty ? "plugins directory changed: nothing to do" : parts.joined(separator: "; ")
    }
}
