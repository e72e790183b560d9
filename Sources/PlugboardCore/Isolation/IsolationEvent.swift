/// A change in an isolated plugin's child: what
/// ``PluginHost/Configuration/Observability/isolationEvents`` hears, and what the host's
/// diagnostics record (codes `isolated-started`, `isolated-crashed`,
/// `isolated-timedOut`, `isolated-restarted`, `isolated-quarantined`, `isolated-stopped`).
public struct IsolationEvent: Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable, Equatable {
        /// The first child started and the plugin is active; or a child
        /// replacing one that was drained (see ``timedOut``).
        case started
        /// The child crashed, exited, stopped answering or broke the protocol.
        case crashed
        /// A call ran past its deadline and failed alone (its child was told
        /// to cancel it; a child whose call still runs is drained). Never a crash.
        case timedOut
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

    /// One line: `com.example.search timedOut (process 4242): the call of run ran past…`.
    public var description: String {
        "\(pluginID) \(kind.rawValue)\(pid.map { " (process \($0))" } ?? ""): \(detail)"
    }

    package init(pluginID: String, kind: Kind, pid: Int32? = nil, detail: String) {
        self.pluginID = pluginID
        self.kind = kind
        self.pid = pid
        self.detail = detail
    }
}
