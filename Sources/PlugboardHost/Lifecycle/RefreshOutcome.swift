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
