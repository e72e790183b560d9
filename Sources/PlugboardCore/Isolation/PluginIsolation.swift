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
        /// Calls the child serves at once (1 to 1,024), each on a thread of
        /// its own while it runs synchronous code. Further calls wait for a
        /// free one until their deadline, then fail with `plugin-timeout`
        /// (counted as shed in ``PluginHost/snapshot()``).
        public var callsInFlight: Int

        /// Memory the child may hold, bytes: its pages, and the shared
        /// memory and tmpfs pages it writes (a cgroup's memory limit; nil:
        /// none). Reaching it ends the child (`plugin-out-of-memory`),
        /// counted against its restart budget. Keep ``addressSpace`` above it.
        public var memory: Int?
        /// Threads and processes the child may have at once (a cgroup's pids
        /// limit; nil: none). Past it, making a thread fails in the child.
        public var tasks: Int?
        /// The CPU the child may use, in cores (0.5: half of one; a cgroup's
        /// CPU quota; nil, the default: none). A child that wants more waits.
        /// Without a quota, a host's children still share one cgroup's
        /// weight against the host's own threads when the CPU is busy (a
        /// quota adds the scheduler's bandwidth accounting: 1.01x to 1.09x
        /// a call in `make bench` here).
        public var cpuCores: Double?
        /// What the host does where no cgroup can hold ``memory``, ``tasks``
        /// and ``cpuCores`` (docs/sandbox.md, "Resources"): `.required`
        /// refuses the start (`resource-bounds-unavailable`); `.bestEffort`
        /// starts the child with what the rlimits bound and reports the gap.
        public var bounds: PluginSandbox.Enforcement

        public init(
            cpuSeconds: Int? = nil, addressSpace: Int? = 4 << 30, descriptors: Int? = 256, callsInFlight: Int = 64,
            memory: Int? = 1 << 30, tasks: Int? = 512, cpuCores: Double? = nil, bounds: PluginSandbox.Enforcement = .bestEffort
        ) {
            self.cpuSeconds = cpuSeconds
            self.addressSpace = addressSpace
            self.descriptors = descriptors
            self.callsInFlight = min(max(callsInFlight, 1), 1024)
            self.memory = memory
            self.tasks = tasks
            self.cpuCores = cpuCores
            self.bounds = bounds
        }
    }

    /// Whether the plugin runs in a child process.
    public var isolated: Bool
    /// The child's limits (ignored in process).
    public var limits: Limits
    /// The child's sandbox (docs/sandbox.md); nil: a plain child, with the
    /// host's user and rights. A sandbox implies a child.
    public var sandbox: PluginSandbox?
    /// The children a pool may have.
    static let childrenRange = 1...64

    private static func clamped(_ children: Int) -> Int {
        min(max(children, childrenRange.lowerBound), childrenRange.upperBound)
    }

    /// How many children run the plugin (1 to 64), a pool when more than
    /// one: each has its own instance and state (every one runs `init` and
    /// `activate`), a call goes to the least loaded, an event to one of
    /// them. Storage is shared, under its lock. The restart budget counts the
    /// crashes of all; a crashed child restarts in the background while the
    /// others serve. A pool hands over no state in a hot reload.
    public var children: Int {
        didSet { children = Self.clamped(children) }
    }

    /// In the host's process.
    public static let inProcess = PluginIsolation(isolated: false)
    /// In a child process with the default limits.
    public static let isolated = PluginIsolation(isolated: true)
    /// In a sandboxed child process: the default limits, no grants, every
    /// layer required.
    public static let sandboxed = PluginIsolation(isolated: true, sandbox: PluginSandbox())

    public init(isolated: Bool, limits: Limits = Limits(), sandbox: PluginSandbox? = nil, children: Int = 1) {
        self.isolated = isolated || sandbox != nil
        self.limits = limits
        self.sandbox = sandbox
        self.children = Self.clamped(children)
    }
}
