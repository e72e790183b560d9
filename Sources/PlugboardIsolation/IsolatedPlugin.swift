import Dispatch
import FoundationEssentials
@_spi(PlugboardHost) import Plugboard
import Synchronization
#if canImport(Glibc)
import Glibc
#endif
import PlugboardCore
import PlugboardRegistry
import PlugboardServices
import PlugboardLoading

/// One isolated plugin: its child process (started, called, restarted,
/// stopped), its restart budget, and the proxies the registry holds.
///
/// Calls run side by side, up to the child's limit (``CallSlots``), each
/// inline on the caller's thread: write the request, wait for its reply
/// (``ReplyRouter``). A call that waits past its deadline for a slot gives
/// up without touching the child; one whose reply is late kills the child.
package final class IsolatedPlugin: Sendable {
    /// Everything needed to start a child for this plugin.
    package struct Launch: Sendable {
        let program: String
        let environmentNames: [String]
        let extraEnvironment: [String: String]
        var request: IsolationProtocol.StartRequest
        let crossings: [String: PointCrossing]
        let policies: [String: IsolatedCallPolicy]
        let budget: RestartBudget
        let startTimeout: Duration
        let logSink: LogSink
        let report: @Sendable (HostDiagnostic) -> Void
        let events: (@Sendable (IsolationEvent) -> Void)?
        /// The host's event bus: the plugin's subscriptions are forwarded from it.
        let eventHub: EventHub
        /// Registers a route of the plugin's in the host's table (nil: the
        /// plugin did not declare the router service, or it is denied).
        let registerRoute: (@Sendable (String, @escaping @Sendable (RouteMatch) throws -> any Sendable) throws(ServiceError) -> Void)?
        /// Removes this generation's routes from the host's table.
        let retireRoutes: @Sendable () -> Void
        /// The kernel's bounds of each child (nil: none; docs/sandbox.md, "Resources").
        let bounds: ChildBounds?

        package init(program: String, environmentNames: [String], extraEnvironment: [String: String], request: IsolationProtocol.StartRequest, crossings: [String: PointCrossing], policies: [String: IsolatedCallPolicy], budget: RestartBudget, startTimeout: Duration, logSink: LogSink, report: @escaping @Sendable (HostDiagnostic) -> Void, events: (@Sendable (IsolationEvent) -> Void)? = nil, eventHub: EventHub, registerRoute: (@Sendable (String, @escaping @Sendable (RouteMatch) throws -> any Sendable) throws(ServiceError) -> Void)? = nil, retireRoutes: @escaping @Sendable () -> Void, bounds: ChildBounds? = nil) {
            self.bounds = bounds
            self.program = program
            self.environmentNames = environmentNames
            self.extraEnvironment = extraEnvironment
            self.request = request
            self.crossings = crossings
            self.policies = policies
            self.budget = budget
            self.startTimeout = startTimeout
            self.logSink = logSink
            self.report = report
            self.events = events
            self.eventHub = eventHub
            self.registerRoute = registerRoute
            self.retireRoutes = retireRoutes
        }
    }

    enum Phase: String {
        case notStarted = "not-started", running, quarantined, stopped
    }

    struct State {
        /// One per child of its pool (``PluginIsolation/children``); nil:
        /// that child is down (it crashed; it restarts).
        var children: [IsolatedChildProcess?]
        /// Calls each child has in flight, for a pool: a call goes to the least loaded.
        var load: [Int]
        /// A background restart of that child is scheduled: one at a time.
        var restartPending: [Bool]
        /// Children spawned so far: each child's relayed requests carry its number.
        var spawns = 0
        var phase = Phase.notStarted
        var crashes: [ContinuousClock.Instant] = []
        var restarts = 0
        /// Calls that ran past their deadline (never a crash), the children
        /// being asked whether they still answer, and those being drained.
        var timeouts = 0
        var watched: Set<Int32> = []
        var draining: [IsolatedChildProcess] = []
        /// Members whose child was drained: their next child is a replacement, not a restart.
        var replacing: Set<Int> = []
        /// Children the kernel ended for passing their memory bound.
        var outOfMemoryKills = 0
        /// What the first child provided (interface and profile, in order):
        /// proxies address providers by index, so every restart must match it.
        var provided: [IsolationProtocol.StartReply.Provider] = []
        /// Restarts that failed in a row (backs off fail-open restarts).
        var failedRestarts = 0
        /// What the running child's sandbox reached.
        var sandbox: SandboxReport?
        /// The generation that replaced this one live (see ``replaced(by:)``),
        /// and those this one replaced.
        var successor: IsolatedPlugin?
        var predecessors: [Predecessor] = []
        /// Restarts tried, and the last one's failure: callers that waited
        /// for a restart that failed get its error rather than try again
        /// (each failure counts against the budget).
        var restartAttempts = 0
        var lastRestartFailure: IsolatedCallError?
        /// The route patterns its children registered in the host, with the
        /// children (by spawn number) that registered each.
        var routes: [String: Set<Int>] = [:]
    }

    let pluginID: String
    let path: String
    package let generation: Int
    let launch: Launch
    /// One per call in flight (the limit times the pool's children); a
    /// stop or a state save takes them all.
    let slots: CallSlots
    /// Held while a child starts, one per child of the pool: one start or
    /// restart of each at a time.
    let restarting: [CallSlots]
    /// Whether it runs in more than one child.
    package var pooled: Bool { restarting.count > 1 }
    let state: Mutex<State>
    /// Calls and failures, for ``PluginHost/snapshot()``.
    package let counts = CallCounts()
    /// Events the child subscribed to (once each, across restarts).
    let subscribed = Mutex<Set<String>>([])
    /// Publishes what the child published, in order, off the thread that
    /// drains its pipes.
    let publications = DispatchQueue(label: "plugboard.isolated-publications")
    /// Writes the host's events to the child, in order, off the publisher's thread.
    let deliveries = DispatchQueue(label: "plugboard.isolated-deliveries")
    /// Events waiting each way, bounded.
    package let eventQueues = EventQueues(bound: IsolatedPlugin.eventQueue)
    /// Events that may wait each way between the host and one child.
    static let eventQueue = 1_024
    /// Hears the quarantine (the host records it and drops the providers) and
    /// fail-open changes (the host shows or hides the providers).
    let onQuarantine: @Sendable (Quarantine) -> Void
    let onAvailability: @Sendable (Bool) -> Void
    /// Whether a fail-open plugin's providers are shown now.
    let shown = Mutex(true)
    /// The last request's number.
    let sequences = Atomic<UInt64>(0)
    /// A child spawned ahead, waiting for its start request, once the
    /// plugin has crashed: the next restart skips the spawn, most of its
    /// cost. Plugins that never crash pay nothing for it.
    package let spare = Mutex<SpareSlot>(.none)
    let spareTickets = Atomic<UInt64>(0)

    /// The spare's slot: claimed (`coming`) before the spawn, under the
    /// lock, so a crash and the restart after it start one spare, not two.
    package enum SpareSlot {
        case none
        /// Being spawned by the work holding this ticket.
        case coming(UInt64)
        case ready(IsolatedChildProcess)

        package var child: IsolatedChildProcess? {
            if case let .ready(child) = self { return child }
            return nil
        }
    }
    /// Off only for the benchmark's restarts without a spare.
    package let sparesAllowed = Atomic<Bool>(true)
    /// Whether the plugin links Foundation (its spares load it ahead), read once.
    let foundationLinked = Mutex<Bool?>(nil)

    package init(
        pluginID: String, path: String, generation: Int, launch: Launch, slots: CallSlots, restarting: [CallSlots],
        onQuarantine: @escaping @Sendable (Quarantine) -> Void, onAvailability: @escaping @Sendable (Bool) -> Void
    ) {
        self.slots = slots
        self.restarting = restarting
        let count = restarting.count
        state = Mutex(State(children: Array(repeating: nil, count: count), load: Array(repeating: 0, count: count),
                            restartPending: Array(repeating: false, count: count)))
        self.pluginID = pluginID
        self.path = path
        self.generation = generation
        self.launch = launch
        self.onQuarantine = onQuarantine
        self.onAvailability = onAvailability
    }

    package var status: IsolationStatus {
        let spare = spare.withLock { $0.child }
        let (snapshot, children, kills) = state.withLock { state in
            let running = state.phase == .running ? state.children.compactMap { $0 } : []
            var status = IsolationStatus(
                mode: launch.request.sandbox == nil ? "isolated" : "sandboxed",
                state: state.phase == .running && running.isEmpty ? "down" : state.phase.rawValue,
                pid: running.first?.pid, restarts: state.restarts)
            if pooled { status.pool = running.map(\.pid) }
            status.timeouts = state.timeouts
            status.draining = state.draining.map(\.pid)
            status.spare = spare?.pid
            if let needed = launch.request.sandbox?.needed, let report = state.sandbox {
                status.sandbox = SandboxStatus(report, needed: needed)
            }
            return (status, running + state.draining + (spare.map { [$0] } ?? []), state.outOfMemoryKills)
        }
        // The cgroup's files read outside the lock calls and crashes take.
        var status = snapshot
        if !children.isEmpty { status.resources = resources(of: children, outOfMemoryKills: kills) }
        return status
    }

    /// What the kernel counts of `children` (their sum: the cgroup's
    /// figures, /proc's where no cgroup counts), with the bounds that hold.
    private func resources(of children: [IsolatedChildProcess], outOfMemoryKills: Int) -> ResourceUsage {
        let counted = children.map { child in
            let process = ProcessUsage.of(child.pid)
            guard var usage = child.cgroup?.usage() else { return process ?? ResourceUsage(boundBy: "none") }
            usage.memory = usage.memory ?? process?.memory
            usage.peakMemory = usage.peakMemory ?? process?.peakMemory
            usage.tasks = usage.tasks ?? process?.tasks
            usage.cpuSeconds = usage.cpuSeconds ?? process?.cpuSeconds
            return usage
        }
        var usage = counted.dropFirst().reduce(counted[0]) { $0.adding($1) }
        usage.outOfMemoryKills = outOfMemoryKills
        if let held = launch.bounds?.held() {
            (usage.memoryLimit, usage.tasksLimit, usage.cpuCoresLimit) = (held.memoryLimit, held.tasksLimit, held.cpuCoresLimit)
            usage.boundBy = held.boundBy
        }
        return usage
    }

    /// Whether some point of this plugin fails open (its providers are hidden while it is down).
    var failsOpen: Bool { launch.policies.values.contains { $0.failure == .open } }
}
