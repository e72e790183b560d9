/// Published by the host when a plugin stops while the host runs: it was
/// quarantined (an isolated plugin over its restart budget), or a plugin it
/// requires stopped. A plugin that optionally requires it subscribes to
/// learn that it is gone, and carries on without it:
///
/// ```swift
/// events.subscribe(PluginStopped.self) { stopped in
///     if stopped.pluginID == "com.example.analytics" { analytics.withLock { $0 = nil } }
/// }
/// ```
///
/// Not published for a reload (its dependents are stopped and started
/// again) or a shutdown.
public struct PluginStopped: PluginEvent, Equatable {
    /// `plugboard.plugin-stopped`.
    public static let name = "plugboard.plugin-stopped"
    /// The plugin that stopped.
    public let pluginID: String
    /// Why, as a stable code: `isolated-crash-loop`, `dependency-quarantined`, ...
    public let code: String
    /// Why, for people.
    public let reason: String

    /// An event saying plugin `pluginID` stopped, for `code`.
    public init(pluginID: String, code: String, reason: String) {
        self.pluginID = pluginID
        self.code = code
        self.reason = reason
    }
}
