import Foundation
import Plugboard
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One isolated plugin: its child process (started, called, restarted,
/// stopped), its restart budget, and the proxies the registry holds.
///
/// Calls are made one at a time (``CallToken``), each inline on the
/// caller's thread: write the request, read the reply. A call that waits
/// past its deadline for the token gives up without touching the child; one
/// whose reply is late kills the child.
final class IsolatedPlugin: Sendable {
    /// Everything needed to start a child for this plugin.
    struct Launch: Sendable {
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
    }

    enum Phase: String {
        case notStarted = "not-started", running, down, quarantined, stopped
    }

    struct State {
        var child: IsolatedChildProcess?
        var phase = Phase.notStarted
        var crashes: [ContinuousClock.Instant] = []
        var restarts = 0
        var sequence: UInt64 = 0
        var quarantine: Quarantine?
    }

    let pluginID: String
    let path: String
    let generation: Int
    let launch: Launch
    let token: CallToken
    let state = Mutex(State())
    /// Events the child subscribed to (once each, across restarts).
    let subscribed = Mutex<Set<String>>([])
    /// Hears the quarantine (the host records it and drops the providers) and
    /// fail-open changes (the host shows or hides the providers).
    let onQuarantine: @Sendable (Quarantine) -> Void
    let onAvailability: @Sendable (Bool) -> Void

    init(
        pluginID: String, path: String, generation: Int, launch: Launch, token: CallToken,
        onQuarantine: @escaping @Sendable (Quarantine) -> Void, onAvailability: @escaping @Sendable (Bool) -> Void
    ) {
        self.token = token
        self.pluginID = pluginID
        self.path = path
        self.generation = generation
        self.launch = launch
        self.onQuarantine = onQuarantine
        self.onAvailability = onAvailability
    }

    var status: IsolationStatus {
        state.withLock { state in
            IsolationStatus(mode: "isolated", state: state.phase.rawValue, pid: state.phase == .running ? state.child?.pid : nil, restarts: state.restarts)
        }
    }

    /// Whether some point of this plugin fails open (its providers are hidden while it is down).
    var failsOpen: Bool { launch.policies.values.contains { $0.failure == .open } }

    // MARK: - Starting

    /// Starts the first child: the handshake, init and activate. Returns the
    /// providers to register (proxies), with the state note of a handover.
    func start(state handedOver: [UInt8]? = nil) -> Result<(providers: [RegisteredProvider], stateNote: String?), PluginLoadError> {
        let deadline = ContinuousClock.now + launch.startTimeout
        guard token.acquire(until: deadline) else {
            return .failure(.isolationFailed(path: path, code: .pluginTimeout, reason: "its child could not be started in time"))
        }
        defer { token.release() }
        switch startChild(until: deadline, state: handedOver) {
        case let .success((child, reply)):
            state.withLock { state in
                state.child = child
                state.phase = .running
            }
            announce(.started, pid: child.pid, "its child process \(child.pid) started")
            var providers: [RegisteredProvider] = []
            for (index, provided) in reply.providers.enumerated() {
                guard let crossing = launch.crossings[provided.interfaceID] else { continue }
                let remote = IsolatedProviderEnd(plugin: self, index: UInt32(index), interfaceID: provided.interfaceID)
                do {
                    providers.append(RegisteredProvider(
                        pluginID: pluginID, generation: generation, interfaceID: provided.interfaceID,
                        provider: try crossing.makeProxy(remote, provided.profile[...])))
                } catch {
                    stop()
                    return .failure(.isolationFailed(path: path, code: .pluginProtocol, reason: "the profile of its \(provided.interfaceID) provider does not decode: \(error)"))
                }
            }
            return .success((providers, reply.stateNote))
        case let .failure(error):
            return .failure(error.loadError(path: path))
        }
    }

    /// Spawns a child and runs the handshake; the child is killed on failure.
    private func startChild(until deadline: ContinuousClock.Instant, state handedOver: [UInt8]?) -> Result<(IsolatedChildProcess, IsolationProtocol.StartReply), StartFailure> {
        let child: IsolatedChildProcess
        switch IsolatedChildProcess.spawn(
            program: launch.program, passing: launch.environmentNames, adding: launch.extraEnvironment, pluginID: pluginID,
            report: launch.report, notice: { [weak self] notice in self?.handle(notice) })
        {
        case let .success(started): child = started
        case let .failure(error): return .failure(.call(error))
        }
        var request = launch.request
        request.state = handedOver
        let sequence = nextSequence()
        guard let payload = try? CompactEncoder().encode(request),
              child.channel.send(IsolationProtocol.Kind.start.rawValue, sequence: sequence, payload: payload, until: deadline)
        else {
            return .failure(.call(ended(child, during: "its start")))
        }
        let frame: FrameChannel.Frame
        do {
            frame = try child.channel.receive(until: deadline)
        } catch .timedOut {
            child.kill()
            child.reap()
            child.closeChannel()
            return .failure(.call(IsolatedCallError(.pluginTimeout, pluginID: pluginID,
                message: "its child did not finish init and activate within \(launch.startTimeout) and was killed", outputTail: child.outputTail())))
        } catch {
            return .failure(.call(ended(child, during: "its start")))
        }
        switch IsolationProtocol.Kind(rawValue: frame.kind) {
        case .started? where frame.sequence == sequence:
            if let reply = try? CompactDecoder().decode(IsolationProtocol.StartReply.self, from: frame.payload) {
                // Subscribed before the plugin counts as started: an event
                // that activated it reaches it.
                for name in reply.subscriptions { subscribe(name) }
                return .success((child, reply))
            }
        case .startFailed? where frame.sequence == sequence:
            child.reap(force: false)
            child.closeChannel()
            let failure = (try? CompactDecoder().decode(IsolationProtocol.StartFailure.self, from: frame.payload))
                ?? IsolationProtocol.StartFailure(code: "isolation-handshake-failed", reason: "the child's refusal did not decode")
            return .failure(.refused(code: failure.code, reason: failure.reason))
        default: break
        }
        child.reap()
        child.closeChannel()
        return .failure(.call(IsolatedCallError(.pluginProtocol, pluginID: pluginID, message: "its child answered the start request with a message that breaks the protocol and was killed")))
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

        var callError: (String) -> IsolatedCallError {
            { pluginID in
                switch self {
                case let .call(error): error
                case let .refused(code, reason):
                    IsolatedCallError(.pluginCrashed, pluginID: pluginID, message: "its restart failed (\(code)): \(reason)")
                }
            }
        }
    }

    func nextSequence() -> UInt64 {
        state.withLock { state in
            state.sequence &+= 1
            return state.sequence
        }
    }

    // MARK: - Calls

    /// One call of requirement `method` of provider `index`; the reply's bytes.
    func call(_ index: UInt32, interfaceID: String, method: String, arguments: some Encodable) throws(IsolatedCallError) -> ArraySlice<UInt8> {
        let policy = launch.policies[interfaceID] ?? .standard
        let limit = IsolatedCallPolicy.deadlineOverride ?? policy.deadline
        let deadline = ContinuousClock.now + limit
        guard token.acquire(until: deadline) else {
            throw IsolatedCallError(.pluginTimeout, pluginID: pluginID,
                message: "the call of \(method) waited \(limit) for the plugin's previous call to finish (calls to one isolated plugin run one at a time)")
        }
        defer { token.release() }
        let child = try runningChild(until: deadline)
        let sequence = nextSequence()
        let method = Array(method.utf8.prefix(Int(UInt16.max)))
        let encoded: [UInt8]
        do {
            encoded = try CompactEncoder().encode(arguments)
        } catch {
            throw IsolatedCallError(.pluginThrew, pluginID: pluginID, message: "the arguments of \(String(decoding: method, as: UTF8.self)) cannot be encoded: \(error)")
        }
        let sent = child.channel.send(IsolationProtocol.Kind.call.rawValue, sequence: sequence, until: deadline) { frame in
            withUnsafeBytes(of: index.littleEndian) { frame += $0 }
            withUnsafeBytes(of: UInt16(method.count).littleEndian) { frame += $0 }
            frame += method
            frame += encoded
        }
        guard sent else { throw crashed(child, during: "the call") }
        let frame: FrameChannel.Frame
        do {
            frame = try child.channel.receive(until: deadline)
        } catch {
            switch error {
            case .timedOut:
                child.kill()
                throw recordCrash(child, IsolatedCallError(.pluginTimeout, pluginID: pluginID,
                    message: "the call of \(String(decoding: method, as: UTF8.self)) ran past its deadline of \(limit); the child was killed and restarts on the next call"))
            case .closed:
                throw crashed(child, during: "the call of \(String(decoding: method, as: UTF8.self))")
            case let .malformed(reason):
                throw violation(child, reason)
            }
        }
        guard frame.sequence == sequence else {
            throw violation(child, "it answered call \(frame.sequence) while call \(sequence) was pending")
        }
        switch IsolationProtocol.Kind(rawValue: frame.kind) {
        case .reply?: return frame.payload
        case .threw?:
            throw IsolatedCallError(.pluginThrew, pluginID: pluginID, message: "its provider threw: \(TerminalText.escaped(String(decoding: frame.payload, as: UTF8.self)))")
        case .unknownMethod?:
            throw IsolatedCallError(.pluginThrew, pluginID: pluginID, message: "its provider has no requirement '\(TerminalText.escaped(String(decoding: method, as: UTF8.self)))' (the child's interface is older than the host's)")
        default:
            throw violation(child, "a message of kind \(frame.kind) where a reply was due")
        }
    }

    /// The running child, or a new one (a restart) when the last crashed.
    private func runningChild(until deadline: ContinuousClock.Instant) throws(IsolatedCallError) -> IsolatedChildProcess {
        let (phase, child) = state.withLock { ($0.phase, $0.child) }
        switch phase {
        case .running: if let child { return child }
        case .down: break
        case .quarantined, .stopped, .notStarted:
            throw IsolatedCallError(.pluginUnavailable, pluginID: pluginID,
                message: phase == .quarantined ? "it is quarantined: it crashed more often than its restart budget allows" : "its host stopped it")
        }
        return try restart(until: deadline)
    }

    private func restart(until deadline: ContinuousClock.Instant) throws(IsolatedCallError) -> IsolatedChildProcess {
        let startDeadline = max(deadline, ContinuousClock.now + launch.startTimeout)
        switch startChild(until: startDeadline, state: nil) {
        case let .success((child, _)):
            let restarts = state.withLock { state in
                state.child = child
                state.phase = .running
                state.restarts += 1
                return state.restarts
            }
            // Shown again before anyone hears of the restart.
            if failsOpen { onAvailability(true) }
            announce(.restarted, pid: child.pid, "restarted as process \(child.pid) (restart \(restarts))")
            return child
        case let .failure(failure):
            throw recordCrash(nil, failure.callError(pluginID))
        }
    }

    /// Restarts a fail-open plugin's child in the background after a crash.
    private func restartInBackground() {
        let thread = Thread { [self] in
            let deadline = ContinuousClock.now + launch.startTimeout
            guard token.acquire(until: deadline) else { return }
            defer { token.release() }
            guard state.withLock({ $0.phase }) == .down else { return }
            _ = try? restart(until: deadline)
        }
        thread.start()
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
        child.reap()
        child.closeChannel()
        return recordCrash(child, IsolatedCallError(.pluginProtocol, pluginID: pluginID,
            message: "its child broke the protocol (\(reason)) and was killed", outputTail: child.outputTail()))
    }

    /// Counts a crash against the budget: the plugin is down (restarted on
    /// the next call), or quarantined once over budget. Returns `error`.
    func recordCrash(_ child: IsolatedChildProcess?, _ error: IsolatedCallError) -> IsolatedCallError {
        child?.reap()
        child?.closeChannel()
        let now = ContinuousClock.now
        let (quarantined, count) = state.withLock { state -> (Bool, Int) in
            state.child = nil
            guard state.phase != .stopped else { return (false, 0) }
            state.crashes = state.crashes.filter { now - $0 < launch.budget.window } + [now]
            state.phase = state.crashes.count > launch.budget.crashes ? .quarantined : .down
            return (state.phase == .quarantined, state.crashes.count)
        }
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
        if failsOpen {
            onAvailability(false)
            restartInBackground()
        }
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
