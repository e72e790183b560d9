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
