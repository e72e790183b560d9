/// What `plugboard list` and `inspect` show of a plugin's isolation.
public struct IsolationStatus: Sendable, Equatable, Codable {
    /// `in-process`, `isolated` or `sandboxed`.
    public let mode: String
    /// `not-started`, `running`, `down` (its child crashed, a pool's every
    /// child; restarted on the next call, or at once when fail-open or
    /// pooled), `quarantined` or `stopped`.
    public let state: String
    /// The running child's pid (of a pool, the first running).
    public let pid: Int32?
    /// A pool's running children's pids (nil: no pool).
    public var pool: [Int32]?
    /// Children started after a crash.
    public let restarts: Int
    /// Calls that ran past their deadline (each failed alone; not crashes),
    /// and children being drained because a cancelled call still ran in them.
    public var timeouts: Int?
    public var draining: Int?
    /// What the running child's sandbox reached (nil: not sandboxed, or no child yet).
    public var sandbox: SandboxStatus?
    /// What its running children use, and their bounds (nil: no child running).
    public var resources: ResourceUsage?

    package init(mode: String, state: String, pid: Int32? = nil, pool: [Int32]? = nil, restarts: Int, sandbox: SandboxStatus? = nil) {
        self.mode = mode
        self.state = state
        self.pid = pid
        self.pool = pool
        self.restarts = restarts
        self.sandbox = sandbox
    }
}
