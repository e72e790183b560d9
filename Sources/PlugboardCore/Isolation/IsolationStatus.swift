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
    /// Calls that ran past their deadline (each failed alone; not crashes).
    public var timeouts: Int?
    /// The pids of children being drained because a cancelled call still
    /// ran in them (they end once their calls are done).
    public var draining: [Int32]?
    /// The pid of the spare child kept since a crash, waiting to take the next restart.
    public var spare: Int32?
    /// What the running child's sandbox reached (nil: not sandboxed, or no child yet).
    public var sandbox: SandboxStatus?
    /// What its children use (running, spare and draining), and their bounds (nil: no child).
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
