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
    /// Files known before whose standing changed, not by a reload (a
    /// quarantined plugin's file installed again is examined again).
    public var changed: [StatusChange] = []

    /// A known file's record now, and its status before the refresh.
    public struct StatusChange: Sendable {
        public let record: PluginRecord
        public let previous: PluginStatus
    }
}

extension RefreshOutcome {
    /// One line saying what changed, as the watcher reports it.
    package var summary: String {
        var parts = added.map { "added \($0.id ?? $0.path) (\($0.status.rawValue))" }
        parts += reloaded.map { "reloaded \($0.pluginID)" + ($0.error.map { " failed: [\($0.code.rawValue)] \($0.reason)" } ?? "") }
        parts += removed.map { "removed \($0)" }
        parts += changed.map { change in
            "\(change.record.id ?? change.record.path): \(change.previous.rawValue) -> \(change.record.status.rawValue)"
                + (change.record.code.map { " [\($0)] \(change.record.reason ?? "")" } ?? "")
        }
        return parts.isEmpty ? "plugins directory changed: nothing to do" : parts.joined(separator: "; ")
    }
}
