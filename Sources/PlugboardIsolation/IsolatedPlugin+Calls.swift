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

/// Calls into an isolated plugin's child, and the hand-over to a successor on a reload.
extension IsolatedPlugin {
    /// Calls made, those that failed (any ``IsolatedCallError``), those in
    /// flight now, those that waited for a free slot, and those that gave up
    /// waiting (shed).
    package final class CallCounts: Sendable {
        package let calls = Atomic<Int>(0)
        package let failures = Atomic<Int>(0)
        package let inFlight = Atomic<Int>(0)
        package let queued = Atomic<Int>(0)
        package let shed = Atomic<Int>(0)
        /// Calls sent from their caller's task, no thread handed them (IsolatedPlugin+Suspending).
        package let sentFromTasks = Atomic<Int>(0)
    }

    /// One call of requirement `method` of provider `index`; the reply's
    /// bytes. Counted (an atomic add each: nothing beside a process crossing).
    func call(_ index: UInt32, interfaceID: String, method: String, arguments: some Encodable) throws(IsolatedCallError) -> ArraySlice<UInt8> {
        try call(index, interfaceID: interfaceID, method: method, encoded: encoded(arguments, of: method))
    }

    /// The arguments' bytes (a failure counted as a failed call).
    func encoded(_ arguments: some Encodable, of method: String) throws(IsolatedCallError) -> [UInt8] {
        do {
            return try CompactEncoder().encode(arguments)
        } catch {
            counts.calls.add(1, ordering: .relaxed)
            counts.failures.add(1, ordering: .relaxed)
            throw IsolatedCallError(.pluginThrew, pluginID: pluginID, message: "the arguments of \(method) cannot be encoded: \(error)")
        }
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

    enum Answer {
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

    func answer(_ index: UInt32, interfaceID: String, method: String, encoded: [UInt8]) throws(IsolatedCallError) -> Answer {
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
    func exchange(with child: IsolatedChildProcess, index: UInt32, method: [UInt8], encoded: [UInt8], limit: Duration) throws(IsolatedCallError) -> Answer {
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
        let outcome: Result<FrameChannel.Frame, ReplyRouter.Failure>
        do {
            outcome = .success(try child.replies.exchange(IsolationProtocol.Kind.call.rawValue, sequence: sequence, until: deadline,
                                                          capacity: 6 + method.count + encoded.count) { request(index, method, encoded, into: &$0) })
        } catch {
            outcome = .failure(error)
        }
        return .reply(try reply(from: outcome, of: child, sequence: sequence, method: method, limit: limit))
    }

    /// A call's payload: the provider's index, the method's name, the arguments.
    func request(_ index: UInt32, _ method: [UInt8], _ encoded: [UInt8], into frame: inout [UInt8]) {
        withUnsafeBytes(of: index.littleEndian) { frame += $0 }
        withUnsafeBytes(of: UInt16(method.count).littleEndian) { frame += $0 }
        frame += method
        frame += encoded
    }

    /// What the call `sequence` to `child` came to: the reply's bytes, or
    /// the error its caller gets (a crash, a hang or a violation recorded).
    func reply(
        from outcome: Result<FrameChannel.Frame, ReplyRouter.Failure>, of child: IsolatedChildProcess, sequence: UInt64, method: [UInt8], limit: Duration
    ) throws(IsolatedCallError) -> ArraySlice<UInt8> {
        let frame: FrameChannel.Frame
        switch outcome {
        case let .success(received): frame = received
        case let .failure(error):
            let name = String(decoding: method, as: UTF8.self)
            switch error {
            case .closed: throw crashed(child, during: "the call of \(name)")
            case .sendTimedOut:
                throw recordCrash(child, IsolatedCallError(.pluginTimeout, pluginID: pluginID,
                    message: "the child did not take the call of \(name) within \(limit) (its request pipe stayed full); it was killed and restarts on the next call"))
            case .timedOut:
                // Alone: the calls beside it go on (see IsolatedPlugin+Deadlines).
                timedOut(child, sequence: sequence, call: name, limit: limit)
                endIfDrained(child)
                throw IsolatedCallError(.pluginTimeout, pluginID: pluginID,
                    message: "the call of \(name) ran past its deadline of \(limit) and failed alone; its child was told to cancel it")
            case .cancelled:
                endIfDrained(child)
                throw IsolatedCallError(.callCancelled, pluginID: pluginID, message: "its caller's task was cancelled during the call of \(name); its child was told to cancel it")
            case let .malformed(reason): throw violation(child, reason)
            }
        }
        // The last call of a child being drained ends it.
        endIfDrained(child)
        switch IsolationProtocol.Kind(rawValue: frame.kind) {
        case .reply?: return frame.payload
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

    enum Running {
        /// The child of the pool's `member` (0 when there is no pool).
        case child(member: Int, IsolatedChildProcess)
        case replaced(by: IsolatedPlugin)
    }

    /// The running child (in a pool, the least loaded), or a new one (a
    /// restart) when all are down; or the generation that replaced this one.
    func runningChild() throws(IsolatedCallError) -> Running {
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

    enum Current {
        case running(Running)
        /// Every child is down: this one restarts.
        case down(member: Int)
    }

    func current() throws(IsolatedCallError) -> Current {
        let (phase, found) = state.withLock { state -> (Phase, Current?) in
            switch state.phase {
            case .running:
                // The least loaded child, a healthy one first: a child
                // being watched after a call's deadline (pinged, perhaps
                // about to be drained or killed) only when no other runs.
                var best: Int?
                func better(_ member: Int, than chosen: Int) -> Bool {
                    guard let candidate = state.children[member], let current = state.children[chosen] else { return false }
                    let (suspect, chosenSuspect) = (state.watched.contains(candidate.pid), state.watched.contains(current.pid))
                    if suspect != chosenSuspect { return chosenSuspect }
                    return state.load[member] < state.load[chosen]
                }
                for member in state.children.indices where state.children[member] != nil {
                    if let chosen = best, !better(member, than: chosen) { continue }
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
}
