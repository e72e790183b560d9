/// A change in an isolated plugin's child: what
/// ``PluginHost/Configuration/Observability/isolationEvents`` hears, and what the host's
/// diagnostics record (codes `isolated-started`, `isolated-crashed`,
/// `isolated-restarted`, `isolated-quarantined`, `isolated-stopped`).
public struct IsolationEvent: Sendable, Equatable {
    public enum Kind: String, Sendable, Equatable {
        /// The first child started and the plugin is active.
        case started
        /// The child crashed, exited, hung past a deadline or broke the protocol.
        case crashed
        /// A new child started after a crash (lazily, on the next call).
        case restarted
        /// The plugin crashed more often than its restart budget allows.
        case quarantined
        /// The host stopped the child (shutdown or a hot reload).
        case stopped
    }

    public let pluginID: String
    public let kind: Kind
    /// The child's process id (of the new child for `started`/`restarted`).
    public let pid: Int32?
    /// What happened, in words.
    public let detail: String

    package init(pluginID: String, kind: Kind, pid: Int32? = nil, detail: String) {
        self.pluginID = pluginID
        self.kind = kind
        self.pid = pid
        self.detail = detail
    }
}
