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

/// Starting an isolated plugin's children: the first, a restart's, a spare.
extension IsolatedPlugin {
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
    func startChild(
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
        child.cgroup?.settled()
        switch IsolationProtocol.Kind(rawValue: frame.kind) {
        case .started?:
            if let reply = try? CompactDecoder().decode(IsolationProtocol.StartReply.self, from: frame.payload) {
                if let unjoined = reply.unjoined {
                    launch.report(HostDiagnostic(.warning, code: "resource-bounds-unavailable",
                        message: "its child process \(child.pid) could not join its cgroup \(unjoined): it runs without those bounds", plugin: pluginID))
                }
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
    static func sameProviders(_ one: [IsolationProtocol.StartReply.Provider], _ other: [IsolationProtocol.StartReply.Provider]) -> Bool {
        one.map(\.interfaceID) == other.map(\.interfaceID) && one.map(\.profile) == other.map(\.profile)
    }

    /// Spawns a child of this plugin's program, waiting for its start request.
    func spawnChild(spare: Bool = false) -> Result<IsolatedChildProcess, IsolatedCallError> {
        let spawn = state.withLock { state in
            state.spawns += 1
            return state.spawns
        }
        return IsolatedChildProcess.spawn(
            program: launch.program, passing: launch.environmentNames, adding: launch.extraEnvironment, pluginID: pluginID,
            callsInFlight: launch.request.limits.callsInFlight,
            preloadingFoundation: spare && linksFoundation(), cgroup: launch.bounds?.leaf(), sampledTasks: launch.bounds?.sampledTasks(),
            report: launch.report, notice: { [weak self] notice in self?.handle(notice) },
            relay: { [weak self] request in
                self?.relay(request, from: spawn) ?? HostRelay.Answer(ServiceError(.serviceUnavailable, "its host stopped it"))
            },
            ended: { [weak self] pid in self?.childEnded(pid) })
    }

    /// Whether the plugin or its interface libraries link Foundation: read
    /// from their files the first time a spare is spawned, then kept.
    func linksFoundation() -> Bool {
        if let known = foundationLinked.withLock({ $0 }) { return known }
        let linked = FoundationNeed.linked(byFiles: [launch.request.file] + (launch.request.libraries ?? []))
        foundationLinked.withLock { $0 = linked }
        return linked
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
            let spawned = self.spawnChild(spare: true)
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
            // Called once no restart is under way (after a crash that restarts
            // on the next call, or after a restart): nothing to wait for.
            _ = startDetachedThread(stackSize: 256 << 10) { work() }
        }
    }

    /// Ends the spare (a stop, a quarantine); one still coming is ended when it comes.
    package func discardSpare() {
        spare.withLock { slot in defer { slot = .none }; return slot.child }?.stop(grace: .zero)
    }

    /// The spare, if one is ready (one still coming stays for the next restart).
    func takeSpare() -> IsolatedChildProcess? {
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
}
