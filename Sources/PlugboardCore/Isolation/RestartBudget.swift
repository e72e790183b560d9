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
