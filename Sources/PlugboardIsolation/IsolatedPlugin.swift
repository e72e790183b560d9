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

        package init(program: String, environmentNames: [String], extraEnvironment: [String: String], request: IsolationProtocol.StartRequest, crossings: [String: PointCrossing], policies: [String: IsolatedCallPolicy], budget: RestartBudget, startTimeout: Duration, logSink: LogSink, report: @escaping @Sendable (HostDiagnostic) -> Void, events: (@Sendable (IsolationEvent) -> Void)? = nil, eventHub: EventHub, registerRoute: (@Sendable (String, @escaping @Sendable (RouteMatch) throws -> any Sendable) throws(ServiceError) -> Void)? = nil, retireRoutes: @escaping @Sendable () -> Void) {
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
    let generation: Int
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
    private let sequences = Atomic<UInt64>(0)
    /// A child spawned ahead, waiting for its start request, once the
    /// plugin has crashed: the next restart skips the spawn, most of its
    /// cost. Plugins that never crash pay nothing for it.
    package let spare = Mutex<SpareSlot>(.none)
    private let spareTickets = Atomic<UInt64>(0)

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
        state.withLock { state in
            let running = state.phase == .running ? state.children.compactMap { $0?.pid } : []
            var status = IsolationStatus(
                mode: launch.request.sandbox == nil ? "isolated" : "sandboxed",
                state: state.phase == .running && running.isEmpty ? "down" : state.phase.rawValue,
                pid: running.first, restarts: state.restarts)
            if pooled { status.pool = running }
            if let needed = launch.request.sandbox?.needed, let report = state.sandbox {
                status.sandbox = SandboxStatus(report, needed: needed)
            }
            return status
        }
    }

    /// Whether some point of this plugin fails open (its providers are hidden while it is down).
    var failsOpen: Bool { launch.policies.values.contains { $0.failure == .open } }

    // MARK: - Starting

    /// Starts the first child: the handshake, init and activate. Returns the
    /// providers to register (proxies), with the state note of a handover.
    package func start(state handedOver: [UInt8]? = nil) -> Result<(providers: [RegisteredProvider], stateNote: String?), PluginLoadError> {
        guard restarting[0].acquire(until: .now + launch.startTimeout) else {
            return .failure(.isolationFailed(path: path, code: .pluginTimeout, reason: "its child could not be started in time"))
        }
        defer { restarting[0].release() }
        // Each child of a pool starts as the first did, fresh: a pool
        // hands over no state (each child would have its own).
        var children: [IsolatedChildProcess] = []
        var first: IsolationProtocol.StartReply?
        for member in restarting.indices {
            // Each child has the whole start timeout.
            switch startChild(until: .now + launch.startTimeout, state: pooled ? nil : handedOver) {
            case let .success((child, reply)):
                children.append(child)
                if let first, !Self.sameProviders(reply.providers, first.providers) {
                    children.forEach { $0.stop(grace: .zero) }
                    return .failure(.isolationFailed(path: path, code: .pluginProtocol,
                        reason: "child \(member + 1) of its pool provides \(reply.providers.map(\.interfaceID)) with other profiles or in another order than the first (\(first.providers.map(\.interfaceID))); its contributions() must be the same on every start"))
                }
                if first == nil { first = reply }
            case let .failure(error):
                children.forEach { $0.stop(grace: .zero) }
                return .failure(error.loadError(path: path))
            }
        }
        guard let reply = first else { return .failure(.isolationFailed(path: path, code: .pluginCrashed, reason: "its pool has no child")) }
        state.withLock { state in
            state.children = children
            state.phase = .running
            state.provided = reply.providers
            state.sandbox = reply.sandbox
        }
        let pids = children.map { String($0.pid) }.joined(separator: ", ")
        announce(.started, pid: children[0].pid, pooled ? "its pool of \(children.count) child processes (\(pids)) started" : "its child process \(pids) started")
        var providers: [RegisteredProvider] = []
        for (index, provided) in reply.providers.enumerated() {
            guard let crossing = launch.crossings[provided.interfaceID] else { continue }
            let remote = IsolatedProviderEnd(plugin: self, index: UInt32(index), interfaceID: provided.interfaceID)
            do {
                providers.append(RegisteredProvider(
                    pluginID: pluginID, generation: generation, interfaceID: provided.interfaceID,
                    provider: try crossing.makeProxy(remote, provided.profile[...])))
            } catch {
                // No call can reach it yet: stop the children directly.
                state.withLock { state in
                    state.children = state.children.map { _ in nil }
                    state.phase = .stopped
                }
                children.forEach { $0.stop(grace: Self.stopGrace) }
                return .failure(.isolationFailed(path: path, code: .pluginProtocol, reason: "the profile of its \(provided.interfaceID) provider does not decode: \(error)"))
            }
        }
        let note = pooled && handedOver != nil ? "a pool of children hands over no state: each child starts fresh" : reply.stateNote
        return .success((providers, note))
    }

    /// Spawns a child and runs the handshake; the child is killed on failure.
    private func startChild(
        until deadline: ContinuousClock.Instant, state handedOver: [UInt8]?, fromSpare: Bool = true
    ) -> Result<(IsolatedChildProcess, IsolationProtocol.StartReply), StartFailure> {
        let child: IsolatedChildProcess
        let spared = fromSpare ? takeSpare() : nil
        if let spared {
            child = spared
        } else {
            switch spawnChild() {
            case let .success(started): child = started
            case let .failure(error): return .failure(.call(error))
            }
        }
        var request = launch.request
        request.state = handedOver
        request.rings = child.channel.hasRings
        let sequence = nextSequence()
        guard let payload = try? CompactEncoder().encode(request) else {
            child.stop(grace: .zero)
            return .failure(.call(IsolatedCallError(.pluginProtocol, pluginID: pluginID, message: "its start request cannot be encoded")))
        }
        let frame: FrameChannel.Frame
        do {
            frame = try child.replies.exchange(IsolationProtocol.Kind.start.rawValue, sequence: sequence, until: deadline) { $0 += payload }
        } catch .timedOut {
            child.end()
            return .failure(.call(IsolatedCallError(.pluginTimeout, pluginID: pluginID,
                message: "its child did not finish init and activate within \(launch.startTimeout) and was killed", outputTail: child.outputTail())))
        } catch {
            // A spare that died while it waited is nobody's fault: a fresh child starts instead.
            if spared != nil {
                child.end()
                return startChild(until: deadline, state: handedOver, fromSpare: false)
            }
            return .failure(.call(ended(child, during: "its start")))
        }
        switch IsolationProtocol.Kind(rawValue: frame.kind) {
        case .started?:
            if let reply = try? CompactDecoder().decode(IsolationProtocol.StartReply.self, from: frame.payload) {
                // Subscribed before the plugin counts as started: an event
                // that activated it reaches it.
                for name in reply.subscriptions { subscribe(name) }
                if reply.rings == true { child.channel.useRings() }
                return .success((child, reply))
            }
        case .startFailed?:
            child.reap(force: false)
            child.closeChannel()
            let failure = (try? CompactDecoder().decode(IsolationProtocol.StartFailure.self, from: frame.payload))
                ?? IsolationProtocol.StartFailure(code: "isolation-handshake-failed", reason: "the child's refusal did not decode")
            return .failure(.refused(code: failure.code, reason: failure.reason))
        default: break
        }
        child.end()
        return .failure(.call(IsolatedCallError(.pluginProtocol, pluginID: pluginID, message: "its child answered the start request with a message that breaks the protocol and was killed")))
    }

    /// Whether two children provide the same, in the same order: proxies
    /// address providers by position.
    private static func sameProviders(_ one: [IsolationProtocol.StartReply.Provider], _ other: [IsolationProtocol.StartReply.Provider]) -> Bool {
        one.map(\.interfaceID) == other.map(\.interfaceID) && one.map(\.profile) == other.map(\.profile)
    }

    /// Spawns a child of this plugin's program, waiting for its start request.
    private func spawnChild() -> Result<IsolatedChildProcess, IsolatedCallError> {
        let spawn = state.withLock { state in
            state.spawns += 1
            return state.spawns
        }
        return IsolatedChildProcess.spawn(
            program: launch.program, passing: launch.environmentNames, adding: launch.extraEnvironment, pluginID: pluginID,
            callsInFlight: launch.request.limits.callsInFlight,
            report: launch.report, notice: { [weak self] notice in self?.handle(notice) },
            relay: { [weak self] request in
                self?.relay(request, from: spawn) ?? HostRelay.Answer(ServiceError(.serviceUnavailable, "its host stopped it"))
            },
            ended: { [weak self] pid in self?.childEnded(pid) })
    }

    /// Spawns a spare in the background, unless one is there or coming or
    /// the plugin is no longer running: called once it has crashed.
    /// `waiting`: on this thread, taking over a spare still coming (the
    /// benchmark and the tests want it now).
    package func keepSpare(waiting: Bool = false) {
        guard sparesAllowed.load(ordering: .acquiring), state.withLock({ $0.phase == .running }) else { return }
        let ticket = spareTickets.wrappingAdd(1, ordering: .relaxed).newValue
        let claimed = spare.withLock { slot -> Bool in
            switch slot {
            case .ready: return false
            case .coming where !waiting: return false
            case .none, .coming:
                slot = .coming(ticket)
                return true
            }
        }
        guard claimed else { return }
        let work: @Sendable () -> Void = { [weak self] in
            guard let self else { return }
            let spawned = self.spawnChild()
            let extra = self.spare.withLock { slot -> IsolatedChildProcess? in
                // Discarded or taken over meanwhile: this child is nobody's.
                guard case let .coming(holder) = slot, holder == ticket else { return try? spawned.get() }
                guard case let .success(child) = spawned, self.state.withLock({ $0.phase == .running }) else {
                    slot = .none
                    return try? spawned.get()
                }
                slot = .ready(child)
                return nil
            }
            extra?.stop(grace: .zero)
        }
        if waiting { work() } else {
            // A little later: not beside the restart a crash is about to
            // cause, nor the restarted child's first calls (both want the CPU).
            _ = startDetachedThread(stackSize: 256 << 10) {
                usleep(100_000)
                work()
            }
        }
    }

    /// Ends the spare (a stop, a quarantine); one still coming is ended when it comes.
    package func discardSpare() {
        spare.withLock { slot in defer { slot = .none }; return slot.child }?.stop(grace: .zero)
    }

    /// The spare, if one is ready (one still coming stays for the next restart).
    private func takeSpare() -> IsolatedChildProcess? {
        spare.withLock { slot in
            guard let child = slot.child else { return nil }
            slot = .none
            return child
        }
    }

    enum StartFailure: Error {
        case call(IsolatedCallError)
        case refused(code: String, reason: String)

        func loadError(path: String) -> PluginLoadError {
            switch self {
            case let .call(error): .isolationFailed(path: path, code: error.code, reason: error.description)
            case let .refused(code, reason): PluginLoadError(code: .init(code), path: path, reason: reason, status: .failed)
            }
        }

        func callError(for pluginID: String) -> IsolatedCallError {
            switch self {
            case let .call(error): error
            case let .refused(code, reason):
                IsolatedCallError(.pluginCrashed, pluginID: pluginID, message: "its restart failed (\(code)): \(reason)")
            }
        }
    }

    /// A number for the next request: an atomic, not the state's lock,
    /// which every call in flight would contend for.
    func nextSequence() -> UInt64 {
        sequences.wrappingAdd(1, ordering: .relaxed).newValue
    }

    // MARK: - Calls

    /// Calls made, those that failed (any ``IsolatedCallError``), those in
    /// flight now, those that waited for a free slot, and those that gave up
    /// waiting (shed).
    package final class CallCounts: Sendable {
        package let calls = Atomic<Int>(0)
        package let failures = Atomic<Int>(0)
        package let inFlight = Atomic<Int>(0)
        package let queued = Atomic<Int>(0)
        package let shed = Atomic<Int>(0)
    }

    /// One call of requirement `method` of provider `index`; the reply's
    /// bytes. Counted (an atomic add each: nothing beside a process crossing).
    func call(_ index: UInt32, interfaceID: String, method: String, arguments: some Encodable) throws(IsolatedCallError) -> ArraySlice<UInt8> {
        let encoded: [UInt8]
        do {
            encoded = try CompactEncoder().encode(arguments)
        } catch {
            counts.calls.add(1, ordering: .relaxed)
            counts.failures.add(1, ordering: .relaxed)
            throw IsolatedCallError(.pluginThrew, pluginID: pluginID, message: "the arguments of \(method) cannot be encoded: \(error)")
        }
        return try call(index, interfaceID: interfaceID, method: method, encoded: encoded)
    }

    /// The same with the arguments' bytes: a forwarded call reuses them.
    func call(_ index: UInt32, interfaceID: String, method: String, encoded: [UInt8]) throws(IsolatedCallError) -> ArraySlice<UInt8> {
        counts.calls.add(1, ordering: .relaxed)
        let answer: Answer
        do {
            answer = try self.answer(index, interfaceID: interfaceID, method: method, encoded: encoded)
        } catch {
            counts.failures.add(1, ordering: .relaxed)
            throw error
        }
        switch answer {
        case let .reply(bytes): return bytes
        case let .forward(successor, index):
            // Outside this generation's slot: its stop need not wait for the
            // new one. Counted there, not here.
            counts.calls.subtract(1, ordering: .relaxed)
            return try successor.call(index, interfaceID: interfaceID, method: method, encoded: encoded)
        }
    }

    /// Answers `request` by the route `pattern` the child registered.
    func respond(to request: RouteRequest, pattern: String, match: RouteMatch) throws(IsolatedCallError) -> RouteResponse {
        let bytes = try call(IsolationProtocol.routeIndex, interfaceID: Services.Router.id, method: pattern,
                             encoded: RouteWire.request(request, match: match))
        guard let response = RouteWire.response(from: bytes) else {
            throw IsolatedCallError(.pluginProtocol, pluginID: pluginID, message: "the response of its route '\(pattern)' does not decode")
        }
        // The child is not trusted: what a server would pass on as HTTP must be HTTP.
        if let problem = RouteWire.problem(with: response) {
            throw IsolatedCallError(.pluginProtocol, pluginID: pluginID, message: "the response of its route '\(pattern)' is refused: \(problem)")
        }
        return response
    }

    private enum Answer {
        case reply(ArraySlice<UInt8>)
        /// Not sent before a live replacement stopped this generation: the
        /// new one answers, through its provider at that index.
        case forward(IsolatedPlugin, UInt32)
    }

    /// A later generation that replaced this one live: calls that reach this
    /// one after its stop began, never sent to its child, go there. Earlier
    /// generations go straight to it too, so each replaced one (its pipes)
    /// is freed once no caller holds its providers, not kept by a chain.
    package func replaced(by successor: IsolatedPlugin) {
        let earlier = state.withLock { state in
            state.successor = successor
            defer { state.predecessors = [] }
            return state.predecessors.compactMap(\.plugin)
        }
        for plugin in earlier { plugin.state.withLock { $0.successor = successor } }
        successor.state.withLock { state in
            state.predecessors = (earlier + [self]).map(Predecessor.init)
        }
    }

    /// A generation this one replaced, while anything still holds it.
    struct Predecessor {
        weak var plugin: IsolatedPlugin?
    }

    private func answer(_ index: UInt32, interfaceID: String, method: String, encoded: [UInt8]) throws(IsolatedCallError) -> Answer {
        let policy = launch.policies[interfaceID] ?? .standard
        let limit = IsolatedCallPolicy.deadlineOverride ?? policy.deadline
        let method = Array(method.utf8.prefix(Int(UInt16.max)))
        // The host's own mistake: refused before the child sees it, and not a crash.
        guard encoded.count + method.count + 64 <= IsolationProtocol.maximumFrame else {
            throw IsolatedCallError(.callTooLarge, pluginID: pluginID,
                message: "the arguments of \(String(decoding: method, as: UTF8.self)) take \(encoded.count) bytes, over the limit of \(IsolationProtocol.maximumFrame) per message; pass bulk data another way (a file in the plugin's storage)")
        }
        if !slots.acquire(until: .now) {
            counts.queued.add(1, ordering: .relaxed)
            guard slots.acquire(until: .now + limit) else {
                counts.shed.add(1, ordering: .relaxed)
                throw IsolatedCallError(.pluginTimeout, pluginID: pluginID,
                    message: "the call of \(String(decoding: method, as: UTF8.self)) waited \(limit) for one of the plugin's \(slots.count) call slots (PluginIsolation.Limits.callsInFlight); the child was not touched")
            }
        }
        counts.inFlight.add(1, ordering: .relaxed)
        defer {
            counts.inFlight.subtract(1, ordering: .relaxed)
            slots.release()
        }
        switch try runningChild() {
        case let .child(member, child):
            // A pool's: counted by runningChild() as it chose this child.
            defer { if pooled { state.withLock { $0.load[member] -= 1 } } }
            return try exchange(with: child, index: index, method: method, encoded: encoded, limit: limit)
        case let .replaced(successor):
            return .forward(successor, try successor.index(matching: index, of: self))
        }
    }

    /// Sends one call to `child` and waits for its reply.
    private func exchange(with child: IsolatedChildProcess, index: UInt32, method: [UInt8], encoded: [UInt8], limit: Duration) throws(IsolatedCallError) -> Answer {
        // The child's own time starts now: time spent waiting for a slot or
        // a restart never counts against a healthy child.
        let deadline = ContinuousClock.now + limit
        let sequence = nextSequence()
        let cancellation = CallCancellation.current
        if let cancellation {
            guard cancellation.sending(sequence, to: child) else {
                throw IsolatedCallError(.callCancelled, pluginID: pluginID, message: "its caller's task was cancelled before the call of \(String(decoding: method, as: UTF8.self)) was sent")
            }
        }
        defer { cancellation?.answered(sequence) }
        let frame: FrameChannel.Frame
        do {
            frame = try child.replies.exchange(IsolationProtocol.Kind.call.rawValue, sequence: sequence, until: deadline,
                                               capacity: 6 + method.count + encoded.count) { frame in
                withUnsafeBytes(of: index.littleEndian) { frame += $0 }
                withUnsafeBytes(of: UInt16(method.count).littleEndian) { frame += $0 }
                frame += method
                frame += encoded
            }
        } catch {
            let name = String(decoding: method, as: UTF8.self)
            switch error {
            case .closed: throw crashed(child, during: "the call of \(name)")
            case .sendTimedOut:
                throw recordCrash(child, IsolatedCallError(.pluginTimeout, pluginID: pluginID,
                    message: "the child did not take the call of \(name) within \(limit) (its request pipe stayed full); it was killed and restarts on the next call"))
            case .timedOut:
                throw recordCrash(child, IsolatedCallError(.pluginTimeout, pluginID: pluginID,
                    message: "the call of \(name) ran past its deadline of \(limit); the child was killed and restarts on the next call"))
            case let .malformed(reason): throw violation(child, reason)
            }
        }
        switch IsolationProtocol.Kind(rawValue: frame.kind) {
        case .reply?: return .reply(frame.payload)
        case .threw?:
            throw IsolatedCallError(.pluginThrew, pluginID: pluginID, message: "its provider threw: \(TerminalText.escaped(String(decoding: frame.payload, as: UTF8.self)))")
        case .replyTooLarge?:
            throw IsolatedCallError(.callTooLarge, pluginID: pluginID,
                message: "\(TerminalText.escaped(String(decoding: frame.payload, as: UTF8.self))); nothing was sent, and the child goes on")
        case .unknownMethod?:
            throw IsolatedCallError(.pluginThrew, pluginID: pluginID, message: "its provider has no requirement '\(TerminalText.escaped(String(decoding: method, as: UTF8.self)))' (the child's interface is older than the host's)")
        default:
            throw violation(child, "a message of kind \(frame.kind) where a reply was due")
        }
    }

    private enum Running {
        /// The child of the pool's `member` (0 when there is no pool).
        case child(member: Int, IsolatedChildProcess)
        case replaced(by: IsolatedPlugin)
    }

    /// The running child (in a pool, the least loaded), or a new one (a
    /// restart) when all are down; or the generation that replaced this one.
    private func runningChild() throws(IsolatedCallError) -> Running {
        let member: Int
        switch try current() {
        case let .running(running): return running
        case let .down(down): member = down
        }
        let attempts = state.withLock { $0.restartAttempts }
        // One restart at a time: the others wait for it and use its child,
        // or its failure.
        guard restarting[member].acquire(until: .now + launch.startTimeout) else {
            throw IsolatedCallError(.pluginTimeout, pluginID: pluginID, message: "its child did not restart within \(launch.startTimeout)")
        }
        defer { restarting[member].release() }
        if case let .running(running) = try current() { return running }
        if let failure = state.withLock({ $0.restartAttempts != attempts ? $0.lastRestartFailure : nil }) { throw failure }
        let child = try restart(member)
        if pooled { state.withLock { $0.load[member] += 1 } }
        return .child(member: member, child)
    }

    private enum Current {
        case running(Running)
        /// Every child is down: this one restarts.
        case down(member: Int)
    }

    private func current() throws(IsolatedCallError) -> Current {
        let (phase, found) = state.withLock { state -> (Phase, Current?) in
            switch state.phase {
            case .running:
                var best: Int?
                for member in state.children.indices where state.children[member] != nil {
                    if let chosen = best, state.load[chosen] <= state.load[member] { continue }
                    best = member
                }
                guard let best, let child = state.children[best] else { return (.running, .down(member: 0)) }
                // Counted as it is chosen: calls arriving together spread.
                if pooled { state.load[best] += 1 }
                return (.running, .running(.child(member: best, child)))
            case .stopped:
                return (.stopped, state.successor.map { .running(.replaced(by: $0)) })
            case .quarantined, .notStarted:
                return (state.phase, nil)
            }
        }
        if let found { return found }
        throw IsolatedCallError(.pluginUnavailable, pluginID: pluginID,
            message: phase == .quarantined ? "it is quarantined: it crashed more often than its restart budget allows" : "its host stopped it")
    }

    /// This generation's provider at `index` of `previous`: the same
    /// interface, the same place among that interface's providers.
    func index(matching index: UInt32, of previous: IsolatedPlugin) throws(IsolatedCallError) -> UInt32 {
        // A route's call names its route by pattern, in any generation.
        if index == IsolationProtocol.routeIndex { return index }
        let old = previous.state.withLock { $0.provided }
        let new = state.withLock { $0.provided }
        guard Int(index) < old.count else { throw IsolatedCallError(.pluginUnavailable, pluginID: pluginID, message: "its host stopped it") }
        let interface = old[Int(index)].interfaceID
        let place = old[..<Int(index)].filter { $0.interfaceID == interface }.count
        let matching = new.indices.filter { new[$0].interfaceID == interface }
        guard place < matching.count else {
            throw IsolatedCallError(.pluginUnavailable, pluginID: pluginID,
                message: "its new generation (\(generation)) no longer provides that \(interface) provider")
        }
        return UInt32(matching[place])
    }

    /// A new child for the pool's `member` after a crash (the caller holds
    /// its ``restarting``). It must provide what the first one did, in the
    /// same order, and the plugin must not have been stopped or quarantined
    /// meanwhile.
    private func restart(_ member: Int) throws(IsolatedCallError) -> IsolatedChildProcess {
        switch startChild(until: .now + launch.startTimeout, state: nil) {
        case let .success((child, reply)):
            let (restarts, taken, provided) = state.withLock { state -> (Int, Bool, [IsolationProtocol.StartReply.Provider]) in
                guard state.phase == .running, state.children[member] == nil else { return (0, false, state.provided) }
                state.children[member] = child
                state.restarts += 1
                state.failedRestarts = 0
                state.lastRestartFailure = nil
                state.sandbox = reply.sandbox
                return (state.restarts, true, state.provided)
            }
            guard taken else {
                // Stopped or quarantined while it started: this child is nobody's.
                child.stop(grace: .zero)
                throw IsolatedCallError(.pluginUnavailable, pluginID: pluginID, message: "its host stopped it while it restarted")
            }
            guard Self.sameProviders(reply.providers, provided) else {
                throw violation(child, "after a restart it provides \(reply.providers.map(\.interfaceID)) with other profiles or in another order than its first start (\(provided.map(\.interfaceID))); proxies address providers by position, so its contributions() must be the same on every start")
            }
            // Shown again before anyone hears of the restart.
            if failsOpen { updateAvailability() }
            keepSpare()
            announce(.restarted, pid: child.pid, "restarted as process \(child.pid) (restart \(restarts))")
            return child
        case let .failure(failure):
            state.withLock { $0.failedRestarts += 1 }
            let error = recordCrash(nil, member: member, failure.callError(for: pluginID))
            state.withLock { state in
                state.restartAttempts += 1
                state.lastRestartFailure = error
            }
            throw error
        }
    }

    /// Restarts the pool's `member` in the background after a crash: a
    /// fail-open plugin's child, or any child of a pool (the others serve
    /// meanwhile).
    private func restartInBackground(_ member: Int) {
        let failed = state.withLock { state -> Int? in
            guard !state.restartPending[member] else { return nil }
            state.restartPending[member] = true
            return state.failedRestarts
        }
        guard let failed else { return }
        startDetachedThread { [self] in
            // Backs off while restarts keep failing: 0.1 s, 0.2 s, ... up to 30 s.
            if failed > 0 { usleep(useconds_t(min(30_000_000, 100_000 << min(failed - 1, 9)))) }
            let acquired = restarting[member].acquire(until: .now + launch.startTimeout)
            let wanted = state.withLock { state -> Bool in
                state.restartPending[member] = false
                return state.phase == .running && state.children[member] == nil
            }
            guard acquired else {
                // Another start held it all along: try again later.
                if wanted { restartInBackground(member) }
                return
            }
            defer { restarting[member].release() }
            // A failure schedules the next try (recordCrash).
            if wanted { _ = try? restart(member) }
        }
    }

    /// Shows or hides a fail-open plugin's providers as its children come
    /// and go: serialised, from the state at the time, so that a late
    /// "down" never hides a plugin that a child serves again.
    private func updateAvailability() {
        shown.withLock { shown in
            let serving = state.withLock { $0.children.contains { $0 != nil } }
            guard serving != shown else { return }
            shown = serving
            onAvailability(serving)
        }
    }

    /// A child's output and notices ended on their own: it died (or closed
    /// them), maybe between calls. Counted now, so that calls and events
    /// go to a living child and a pool restarts it.
    /// With calls in flight, those calls tell (as they always did): the
    /// crash is theirs, counted on their threads.
    func childEnded(_ pid: Int32) {
        guard let child = state.withLock({ state in
            state.phase == .running ? state.children.lazy.compactMap { $0 }.first { $0.pid == pid } : nil
        }), child.replies.idle else { return }
        _ = recordCrash(child, ended(child, during: "its service (its output ended)"))
    }

    /// The child's channel closed: it died or exited.
    func crashed(_ child: IsolatedChildProcess, during what: String) -> IsolatedCallError {
        recordCrash(child, ended(child, during: what))
    }

    private func ended(_ child: IsolatedChildProcess, during what: String) -> IsolatedCallError {
        // A child that closed its channel but lives is stopped here, so the ending is known.
        let ending = child.reap()
        let tail = child.outputTail()
        child.closeChannel()
        let signal = ending.signal.map(Signals.name)
        return IsolatedCallError(.pluginCrashed, pluginID: pluginID, message: "its child process \(child.pid) \(ending.description) during \(what)",
                                 signal: signal, exitStatus: ending.status, outputTail: tail)
    }

    func violation(_ child: IsolatedChildProcess, _ reason: String) -> IsolatedCallError {
        child.end()
        return recordCrash(child, IsolatedCallError(.pluginProtocol, pluginID: pluginID,
            message: "its child broke the protocol (\(reason)) and was killed", outputTail: child.outputTail()))
    }

    /// Counts a crash against the budget: the plugin is down (restarted on
    /// the next call), or quarantined once over budget. Returns `error`.
    func recordCrash(_ child: IsolatedChildProcess?, member: Int? = nil, _ error: IsolatedCallError) -> IsolatedCallError {
        // Claimed under the lock before the child is reaped: a call that sees
        // the end this kill causes must not count it first, with its reason.
        let now = ContinuousClock.now
        let (stopped, counted, quarantined, count, crashed, others) = state.withLock { state -> (Bool, Bool, Bool, Int, Int, [IsolatedChildProcess]) in
            guard state.phase != .stopped, state.phase != .quarantined else { return (true, false, false, 0, 0, []) }
            // Every call in flight on a child that died sees it die: the
            // first to tell counts the crash, once.
            var crashed = member ?? 0
            if let child {
                guard let index = state.children.firstIndex(where: { $0 === child }) else { return (false, false, false, 0, 0, []) }
                state.children[index] = nil
                crashed = index
            }
            // The budget is the plugin's, whichever child crashed.
            state.crashes = state.crashes.filter { now - $0 < launch.budget.window } + [now]
            guard state.crashes.count > launch.budget.crashes else { return (false, true, false, state.crashes.count, crashed, []) }
            // Quarantined: the pool's other children go with it.
            state.phase = .quarantined
            defer { state.children = state.children.map { _ in nil } }
            return (false, true, true, state.crashes.count, crashed, state.children.compactMap { $0 })
        }
        for other in others { other.end() }
        if quarantined { discardSpare() }
        // Now, before anyone hears of it (a quarantine may stop dependents for seconds).
        child?.end()
        // The host stopped it (a shutdown or a reload killed the child under
        // this call): not the plugin's crash.
        if stopped {
            return IsolatedCallError(.pluginUnavailable, pluginID: pluginID, message: "its host stopped it during the call")
        }
        guard counted else { return error }
        announce(.crashed, pid: child?.pid, error.description)
        if quarantined {
            var quarantine = Quarantine(
                phase: .call, ending: .isolatedCrashes, signal: error.signal, exitStatus: error.exitStatus, milliseconds: nil,
                stderrTail: error.outputTail, date: Quarantine.now())
            quarantine.crashes = count
            quarantine.window = Int(launch.budget.window / .seconds(1))
            announce(.quarantined, pid: nil, quarantine.account)
            onQuarantine(quarantine)
            return IsolatedCallError(error.code, pluginID: pluginID, message: "\(error.message); it crashed \(count) times in \(launch.budget.window) and is now quarantined",
                                     signal: error.signal, exitStatus: error.exitStatus, outputTail: error.outputTail)
        }
        keepSpare()
        if failsOpen { updateAvailability() }
        if failsOpen || pooled { restartInBackground(crashed) }
        return error
    }

    func announce(_ kind: IsolationEvent.Kind, pid: Int32?, _ detail: String) {
        let severity: HostDiagnostic.Severity = switch kind {
        case .crashed, .quarantined: .error
        case .restarted: .warning
        case .started, .stopped: .info
        }
        launch.report(HostDiagnostic(severity, code: .init("isolated-\(kind.rawValue)"), message: detail, plugin: pluginID))
        launch.events?(IsolationEvent(pluginID: pluginID, kind: kind, pid: pid, detail: detail))
    }
}
