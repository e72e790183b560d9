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

/// What happens when a child ends: restarts within the budget, a quarantine past it, the events that say so.
extension IsolatedPlugin {
    func restart(_ member: Int) throws(IsolatedCallError) -> IsolatedChildProcess {
        switch startChild(until: .now + launch.startTimeout, state: nil) {
        case let .success((child, reply)):
            let (restarts, taken, provided, replacing) = state.withLock { state -> (Int, Bool, [IsolationProtocol.StartReply.Provider], Bool) in
                guard state.phase == .running, state.children[member] == nil else { return (0, false, state.provided, false) }
                state.children[member] = child
                // A drained child's replacement is no restart: nothing crashed.
                let replacing = state.replacing.remove(member) != nil
                if !replacing { state.restarts += 1 }
                state.failedRestarts = 0
                state.lastRestartFailure = nil
                state.sandbox = reply.sandbox
                return (state.restarts, true, state.provided, replacing)
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
            if replacing {
                announce(.started, pid: child.pid, "process \(child.pid) replaces its drained child")
            } else {
                announce(.restarted, pid: child.pid, "restarted as process \(child.pid) (restart \(restarts))")
            }
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
    func restartInBackground(_ member: Int) {
        let failed = state.withLock { state -> Int? in
            guard !state.restartPending[member] else { return nil }
            state.restartPending[member] = true
            return state.failedRestarts
        }
        guard let failed else { return }
        // Backs off while restarts keep failing: 0.1 s, 0.2 s, ... up to 30 s,
        // on a timer (no thread asleep); the restart on a thread of its own.
        guard failed > 0 else { return restartNow(member) }
        let backoff = min(30_000, 100 << min(failed - 1, 9))
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(backoff)) { [self] in restartNow(member) }
    }

    private func restartNow(_ member: Int) {
        startDetachedThread { [self] in
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
    func updateAvailability() {
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

    func ended(_ child: IsolatedChildProcess, during what: String) -> IsolatedCallError {
        // A child that closed its channel but lives is stopped here, so the ending is known.
        let ending = child.reap()
        let tail = child.outputTail()
        child.closeChannel()
        let signal = ending.signal.map(Signals.name)
        let code: IsolatedCallError.Code = ending.outOfMemory ? .pluginOutOfMemory : ending.killedBy?.code ?? .pluginCrashed
        return IsolatedCallError(code, pluginID: pluginID,
                                 message: "its child process \(child.pid) \(ending.description) during \(what)",
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
            if error.code == .pluginOutOfMemory { state.outOfMemoryKills += 1 }
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
        announce(.crashed, pid: child?.pid, error.descriptionWithOutput)
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
        if failsOpen { updateAvailability() }
        // A restart now: the spare follows it (not beside it: both want the
        // CPU); else the next call restarts, on the spare if it is ready.
        if failsOpen || pooled { restartInBackground(crashed) } else { keepSpare() }
        return error
    }

    func announce(_ kind: IsolationEvent.Kind, pid: Int32?, _ detail: String) {
        let severity: HostDiagnostic.Severity = switch kind {
        case .crashed, .quarantined: .error
        case .restarted, .timedOut: .warning
        case .started, .stopped: .info
        }
        launch.report(HostDiagnostic(severity, code: .init("isolated-\(kind.rawValue)"), message: detail, plugin: pluginID))
        launch.events?(IsolationEvent(pluginID: pluginID, kind: kind, pid: pid, detail: detail))
    }
}
