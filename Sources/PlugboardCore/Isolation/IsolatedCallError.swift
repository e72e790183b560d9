/// Why a call to an isolated plugin's provider failed: the caller gets it
/// from the provider's requirement, as any error it throws.
///
/// The ``Code`` is extensible (as ``PluginLoadError/Code``); match on it.
public struct IsolatedCallError: Error, Sendable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
        public let rawValue: String
        public init(_ rawValue: String) { self.rawValue = rawValue }
        public init(stringLiteral value: String) { rawValue = value }
        public var description: String { rawValue }

        /// The child died (a signal), exited, or closed its channel while
        /// the call was pending or while it started. The next call restarts it.
        public static let pluginCrashed: Code = "plugin-crashed"
        /// The kernel ended the child for passing its memory bound
        /// (``PluginIsolation/Limits/memory``); counted as a crash.
        public static let pluginOutOfMemory: Code = "plugin-out-of-memory"
        /// The host ended the child for holding more tasks than its bound
        /// (``PluginIsolation/Limits/tasks``) where no cgroup holds it (its
        /// sampler saw them); counted as a crash.
        public static let pluginResourceExhausted: Code = "plugin-resource-exhausted"
        /// The call ran past its deadline and failed alone: its child was
        /// told to cancel it (docs/isolation.md, "Deadlines"). Not a crash.
        public static let pluginTimeout: Code = "plugin-timeout"
        /// The host killed the child for not answering a liveness ping after
        /// a call ran past its deadline: the calls it held fail with this
        /// code, naming that call and its deadline. Counted as a crash.
        public static let pluginKilledUnresponsive: Code = "plugin-killed-unresponsive"
        /// The provider threw; ``IsolatedCallError/message`` has its error.
        public static let pluginThrew: Code = "plugin-threw"
        /// The child sent a reply that breaks the protocol (malformed, too
        /// large, not the call's): it was killed.
        public static let pluginProtocol: Code = "plugin-protocol-violation"
        /// The call's arguments (a route's request) are over the
        /// per-message limit (64 MiB): refused before the child sees them.
        /// Or its reply (a route's response) is: the child sends none. Not a crash.
        public static let callTooLarge: Code = "isolated-call-too-large"
        /// The plugin crashed more than its restart budget allows and is
        /// quarantined, or the host shut down: no more calls reach it.
        public static let pluginUnavailable: Code = "plugin-unavailable"
        /// The caller's task was cancelled (``IsolatedCallPolicy/withoutBlocking(_:)``
        /// throws `CancellationError` instead): the call was not sent, or
        /// its child was told to cancel it.
        public static let callCancelled: Code = "call-cancelled"
    }

    public let code: Code
    /// The plugin's id.
    public let pluginID: String
    /// What happened, in words.
    public let message: String
    /// For `plugin-crashed`: the signal that ended the child (`SIGSEGV`), if any.
    public let signal: String?
    /// For `plugin-crashed`: its exit status, if it exited.
    public let exitStatus: Int32?
    /// The child's last lines of output (stdout and stderr).
    public let outputTail: [String]

    package init(_ code: Code, pluginID: String, message: String, signal: String? = nil, exitStatus: Int32? = nil, outputTail: [String] = []) {
        self.code = code
        self.pluginID = pluginID
        self.message = message
        self.signal = signal
        self.exitStatus = exitStatus
        self.outputTail = outputTail
    }

    /// The plugin, what happened and the code: short enough for a log
    /// line, and without the child's output (``outputTail``: stack traces,
    /// paths), which a server must not echo to its clients.
    public var description: String {
        "plugin \(pluginID): \(message) [\(code)]"
    }

    /// With the child's last output: for the host's own diagnostics and log.
    package var descriptionWithOutput: String {
        outputTail.isEmpty ? description : "plugin \(pluginID): \(message); its last output: \(outputTail.joined(separator: " | ")) [\(code)]"
    }
}
