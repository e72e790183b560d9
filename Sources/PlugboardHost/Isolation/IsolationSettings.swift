/// Where a plugin's code runs: in the host's process (the default, fastest)
/// or in a child process of its own, where a crash, exit or hang costs a
/// call instead of the host. The plugin's file is the same either way.
public struct PluginIsolation: Sendable, Equatable {
    /// Limits of an isolated plugin's child process.
    public struct Limits: Sendable, Equatable {
        /// CPU seconds the child may use over its life (nil: none).
        public var cpuSeconds: Int?
        /// The child's address space, bytes (not applied under sanitizers,
        /// which reserve huge ranges).
        public var addressSpace: Int?
        /// Open file descriptors the child may hold.
        public var descriptors: Int?

        public init(cpuSeconds: Int? = nil, addressSpace: Int? = 4 << 30, descriptors: Int? = 256) {
            self.cpuSeconds = cpuSeconds
            self.addressSpace = addressSpace
            self.descriptors = descriptors
        }
    }

    /// Whether the plugin runs in a child process.
    public var isolated: Bool
    /// The child's limits (ignored in process).
    public var limits: Limits

    /// In the host's process.
    public static let inProcess = PluginIsolation(isolated: false)
    /// In a child process with the default limits.
    public static let isolated = PluginIsolation(isolated: true)

    public init(isolated: Bool, limits: Limits = Limits()) {
        self.isolated = isolated
        self.limits = limits
    }
}

/// How many times an isolated plugin may crash before it is quarantined:
/// VS Code's rule (3 crashes in 5 minutes) by default. A crash is a child
/// that died, exited, hung past a deadline or broke the protocol.
public struct RestartBudget: Sendable, Equatable {
    /// Crashes allowed within ``window``; one more quarantines the plugin.
    public var crashes: Int
    public var window: Duration

    public init(crashes: Int = 3, window: Duration = .seconds(300)) {
        self.crashes = crashes
        self.window = window
    }
}

/// How the host calls an extension point's isolated providers.
public struct IsolatedCallPolicy: Sendable, Equatable {
    /// What callers see while an isolated provider is down.
    public enum Failure: String, Sendable, Equatable {
        /// The provider stays listed; a call restarts its child, or throws
        /// `plugin-crashed` / `plugin-quarantined`. The default.
        case closed
        /// The provider is left out of the point's list while its child is
        /// down, and restarted in the background.
        case open
    }

    /// Longest time one call may take, waiting for the channel included;
    /// past it the call throws `plugin-timeout` and the child is killed.
    /// `IsolatedCallPolicy.withDeadline(_:_:)` overrides it for the calls a block makes.
    public var deadline: Duration
    public var failure: Failure

    /// Ten seconds, fail closed.
    public static let standard = IsolatedCallPolicy()

    public init(deadline: Duration = .seconds(10), failure: Failure = .closed) {
        self.deadline = deadline
        self.failure = failure
    }

    /// Runs `body` with `deadline` for every isolated call it makes on this
    /// thread or task, instead of each point's own.
    public static func withDeadline<Result>(_ deadline: Duration, _ body: () throws -> Result) rethrows -> Result {
        try $deadlineOverride.withValue(deadline, operation: body)
    }

    /// The same from async code.
    public static func withDeadline<Result>(_ deadline: Duration, _ body: () async throws -> Result) async rethrows -> Result {
        try await $deadlineOverride.withValue(deadline, operation: body)
    }

    @TaskLocal static var deadlineOverride: Duration?
}
